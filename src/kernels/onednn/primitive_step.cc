#include "kernels/onednn/primitive_step.h"

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

PrimitiveStep::PrimitiveStep(dnnl::engine* eng, dnnl::primitive prim)
    : eng_(eng),
      prim_(std::move(prim)),
      scratchpad_md_(ScratchpadDesc(prim_)) {}

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

memory::desc PlainDims(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return memory::desc(dims, memory::data_type::f32, strides);
}

bool FusableActivation(ExecBuilder& b, const std::string& tensor,
                       const Node** node, dnnl::algorithm* alg, float* alpha,
                       float* beta) {
  const Node* c = b.SoleConsumer(tensor);
  if (!c) return false;
  *alpha = 0.f;
  *beta = 0.f;
  if (c->op == "Relu") {
    *alg = dnnl::algorithm::eltwise_relu;
  } else if (c->op == "LeakyRelu") {
    *alg = dnnl::algorithm::eltwise_relu;
    *alpha = c->attrs.GetFloat("alpha", 0.01f);
  } else if (c->op == "Clip") {
    *alg = dnnl::algorithm::eltwise_clip_v2;
    *alpha = c->attrs.GetFloat("min", std::numeric_limits<float>::lowest());
    *beta = c->attrs.GetFloat("max", std::numeric_limits<float>::max());
  } else if (c->op == "Sigmoid") {
    *alg = dnnl::algorithm::eltwise_logistic;
  } else {
    return false;
  }
  *node = c;
  return true;
}

const Node* FuseActivation(ExecBuilder& b, const std::string& tensor,
                           dnnl::primitive_attr* attr) {
  const Node* act = nullptr;
  dnnl::algorithm alg;
  float alpha, beta;
  if (!FusableActivation(b, tensor, &act, &alg, &alpha, &beta)) return nullptr;
  dnnl::post_ops po;
  po.append_eltwise(1.f, alg, alpha, beta);
  attr->set_post_ops(po);
  return act;
}

void AddFusedOutputStep(ExecBuilder& b, const Node& n, const Node* act,
                        std::unique_ptr<PrimitiveStep> step, const Shape& shape,
                        const memory::desc& dst) {
  const std::string& out_name = act ? act->outputs[0] : n.outputs[0];
  int y = b.NewValue(out_name, shape, dst);
  step->AddOutput(DNNL_ARG_DST, y, dst);
  step->label = act ? n.name + "+" + act->op : n.name;
  b.AddStep(std::move(step));
  // The raw output is read only by the fused activation, which is skipped.
  b.Define(n.outputs[0], y);
  if (act) {
    b.Define(act->outputs[0], y);
    b.MarkFused(act->name);
  }
}

}  // namespace shoal
