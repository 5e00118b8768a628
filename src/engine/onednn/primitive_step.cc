#include "engine/onednn/primitive_step.h"

#include <limits>

namespace shoal {

dnnl::primitive_attr ScratchpadAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

memory::desc ScratchpadDesc(const dnnl::primitive& prim) {
  const_dnnl_primitive_desc_t pd = nullptr;
  if (dnnl_primitive_get_primitive_desc(prim.get(), &pd) != dnnl_success)
    return {};
  const dnnl_memory_desc_t* md =
      dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
  return md ? memory::desc(*md) : memory::desc();
}

std::string ImplName(const dnnl::primitive& prim) {
  const_dnnl_primitive_desc_t pd = nullptr;
  const char* name = nullptr;
  if (dnnl_primitive_get_primitive_desc(prim.get(), &pd) != dnnl_success ||
      dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name) !=
          dnnl_success ||
      name == nullptr)
    return "?";
  return name;
}

PrimitiveStep::PrimitiveStep(dnnl::engine* eng, dnnl::primitive prim)
    : eng_(eng), prim_(std::move(prim)), scratchpad_md_(ScratchpadDesc(prim_)) {
  impl = ImplName(prim_);
}

int64_t PrimitiveStep::scratchpad_bytes() const {
  return static_cast<int64_t>(scratchpad_md_.get_size());
}

void PrimitiveStep::BindScratchpad(void* buffer) {
  if (scratchpad_bytes() > 0) {
    args_[DNNL_ARG_SCRATCHPAD] = memory(scratchpad_md_, *eng_, buffer);
  }
}

Status PrimitiveStep::Bind(const std::vector<void*>& ptrs) {
  for (const auto& a : value_args_)
    args_[a.arg] = memory(a.md, *eng_, ptrs[a.value]);
  return Status::Ok();
}

Status PrimitiveStep::Run(RunContext& ctx) {
  try {
    prim_.execute(*ctx.stream, args_);
  } catch (const dnnl::error& e) {
    return Internal(std::string("oneDNN execution failed: ") + e.what());
  }
  return Status::Ok();
}

memory ReorderedWeights(dnnl::engine& eng, const float* data,
                        const memory::desc& plain, const memory::desc& md) {
  memory src(plain, eng, const_cast<float*>(data));
  memory dst(md, eng);
  dnnl::stream s(eng);
  dnnl::reorder(src, dst).execute(s, src, dst);
  s.wait();
  return dst;
}

FixedWeight WeightInLayout(ExecBuilder& b, const std::string& name,
                           const memory::desc& plain, const memory::desc& md) {
  const float* data = b.Weight(name)->data.data();
  const std::string* key = b.WeightKey(name);
  if (key == nullptr) return {ReorderedWeights(b.engine(), data, plain, md)};
  SharedWeights::Impl& s = b.shared_weights()->impl();
  std::lock_guard<std::mutex> lock(s.mu);
  std::vector<SharedWeights::Impl::Copy>& copies = s.by_key[*key];
  // Executors read a view, on their own engine, of the copy SharedWeights
  // holds; the first to ask makes it and counts its bytes.
  for (const auto& c : copies) {
    if (c.plain == plain && c.md == md)
      return {memory(md, b.engine(), c.mem.get_data_handle()), true};
  }
  memory m = ReorderedWeights(s.eng, data, plain, md);
  copies.push_back({plain, md, m});
  s.bytes += static_cast<int64_t>(md.get_size());
  return {memory(md, b.engine(), m.get_data_handle()), false};
}

memory::desc PlainDims(const memory::dims& dims, memory::data_type dt) {
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return memory::desc(dims, dt, strides);
}

bool AppendActivation(const Node& c, dnnl::post_ops* po) {
  using A = dnnl::algorithm;
  if (c.op == "Relu") {
    po->append_eltwise(1.f, A::eltwise_relu, 0.f, 0.f);
  } else if (c.op == "LeakyRelu") {
    po->append_eltwise(1.f, A::eltwise_relu, c.attrs.GetFloat("alpha", 0.01f),
                       0.f);
  } else if (c.op == "Clip") {
    po->append_eltwise(
        1.f, A::eltwise_clip_v2,
        c.attrs.GetFloat("min", std::numeric_limits<float>::lowest()),
        c.attrs.GetFloat("max", std::numeric_limits<float>::max()));
  } else if (c.op == "Sigmoid") {
    po->append_eltwise(1.f, A::eltwise_logistic, 0.f, 0.f);
  } else if (c.op == "Tanh") {
    po->append_eltwise(1.f, A::eltwise_tanh, 0.f, 0.f);
  } else if (c.op == "HardSwish") {
    // ONNX's HardSwish is x * clip(x / 6 + 1/2, 0, 1), oneDNN's exactly.
    po->append_eltwise(1.f, A::eltwise_hardswish, 0.f, 0.f);
  } else if (c.op == "HardSigmoid") {
    // oneDNN 2.6 has no hardsigmoid: alpha x + beta, then a clip.
    po->append_eltwise(1.f, A::eltwise_linear, c.attrs.GetFloat("alpha", 0.2f),
                       c.attrs.GetFloat("beta", 0.5f));
    po->append_eltwise(1.f, A::eltwise_clip_v2, 0.f, 1.f);
  } else {
    return false;
  }
  return true;
}

const Node* SwishOf(ExecBuilder& b, const std::string& tensor) {
  if (b.IsGraphOutput(tensor)) return nullptr;
  const std::vector<const Node*> readers = b.Consumers(tensor);
  if (readers.size() != 2) return nullptr;
  const Node* sig = readers[0]->op == "Sigmoid" ? readers[0] : readers[1];
  const Node* mul = sig == readers[0] ? readers[1] : readers[0];
  if (sig->op != "Sigmoid" || mul->op != "Mul" || mul->inputs.size() != 2)
    return nullptr;
  if (b.SoleConsumer(sig->outputs[0]) != mul) return nullptr;
  const bool operands =
      (mul->inputs[0] == tensor && mul->inputs[1] == sig->outputs[0]) ||
      (mul->inputs[1] == tensor && mul->inputs[0] == sig->outputs[0]);
  return operands ? mul : nullptr;
}

const Node* FuseActivation(ExecBuilder& b, const std::string& tensor,
                           dnnl::primitive_attr* attr) {
  // After the post-ops the attribute has (an int8 layer's scales, binary
  // ops): copied, as get_post_ops() is a view of the attribute's own.
  dnnl::post_ops po;
  const dnnl::post_ops have = attr->get_post_ops();
  for (int i = 0; i < have.len(); ++i) {
    if (have.kind(i) != dnnl::primitive::kind::binary) return nullptr;
    dnnl::algorithm alg;
    memory::desc md;
    have.get_params_binary(i, alg, md);
    po.append_binary(alg, md);
  }
  if (const Node* mul = SwishOf(b, tensor)) {
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_swish, 1.f, 0.f);
    attr->set_post_ops(po);
    return mul;
  }
  const Node* act = b.SoleConsumer(tensor);
  if (act == nullptr) return nullptr;
  if (!AppendActivation(*act, &po)) return nullptr;
  attr->set_post_ops(po);
  return act;
}

void AddFusedOutputStep(ExecBuilder& b, const Node& n, const Node* act,
                        std::unique_ptr<PrimitiveStep> step, const Shape& shape,
                        const memory::desc& dst) {
  const std::string& out_name = act ? act->outputs[0] : n.outputs[0];
  int y = b.NewValue(out_name, shape, dst);
  step->AddOutput(DNNL_ARG_DST, y, dst);
  const Node* swish_gate = nullptr;
  if (act && act->op == "Mul") {
    // SiLU: the Sigmoid feeding the Mul is part of the post-op too.
    for (const Node* r : b.Consumers(n.outputs[0]))
      if (r->op == "Sigmoid") swish_gate = r;
  }
  step->label =
      !act ? n.name : n.name + (swish_gate ? "+Swish" : "+" + act->op);
  b.AddStep(std::move(step));
  // The raw output is read only by the fused activation, which is skipped.
  b.Define(n.outputs[0], y);
  if (act) {
    b.Define(act->outputs[0], y);
    b.MarkFused(act->name);
  }
  if (swish_gate) b.MarkFused(swish_gate->name);
}

}  // namespace shoal
