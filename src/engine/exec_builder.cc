#include "engine/exec_builder.h"

#include <cstring>
#include <iostream>

namespace shoal {

memory::desc PlainDesc(const Shape& shape) {
  memory::dims dims(shape.begin(), shape.end());
  // A false positive of GCC 12 at -O3: inlining this assignment, it loses
  // track of the vector's storage and warns that the old buffer is freed at
  // an offset. That buffer is null (an empty range allocates nothing), and
  // deleting it is a no-op.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wfree-nonheap-object"
#endif
  if (dims.empty()) dims = {1};
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return memory::desc(dims, memory::data_type::f32, strides);
}

bool IsPlain(const memory::desc& md, const Shape& shape) {
  return md == PlainDesc(shape);
}

namespace {

std::string DescKey(const memory::desc& md) {
  return std::string(reinterpret_cast<const char*>(&md.data), sizeof(md.data));
}

// Copies a value into another layout with a oneDNN reorder.
class ReorderStep : public Step {
 public:
  ReorderStep(dnnl::engine* eng, const memory::desc& src,
              const memory::desc& dst)
      : eng_(eng), src_md_(src), dst_md_(dst) {
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    prim_ = dnnl::reorder(
        dnnl::reorder::primitive_desc(*eng_, src_md_, *eng_, dst_md_, attr));
    const_dnnl_primitive_desc_t pd = nullptr;
    dnnl_primitive_get_primitive_desc(prim_.get(), &pd);
    const dnnl_memory_desc_t* md =
        dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    if (md) scratchpad_md_ = memory::desc(*md);
    const char* name = nullptr;
    dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &name);
    impl = name != nullptr ? name : "?";
  }
  Status Bind(const std::vector<void*>& ptrs) override {
    args_[DNNL_ARG_FROM] = memory(src_md_, *eng_, ptrs[reads[0]]);
    args_[DNNL_ARG_TO] = memory(dst_md_, *eng_, ptrs[writes[0]]);
    return Status::Ok();
  }
  Status Run(RunContext& ctx) override {
    prim_.execute(*ctx.stream, args_);
    return Status::Ok();
  }
  int64_t scratchpad_bytes() const override {
    return static_cast<int64_t>(scratchpad_md_.get_size());
  }
  void BindScratchpad(void* buffer) override {
    if (scratchpad_bytes() > 0) {
      args_[DNNL_ARG_SCRATCHPAD] = memory(scratchpad_md_, *eng_, buffer);
    }
  }

 private:
  dnnl::engine* eng_;
  memory::desc src_md_, dst_md_, scratchpad_md_;
  std::unordered_map<int, memory> args_;
  dnnl::reorder prim_;
};

}  // namespace

ExecBuilder::ExecBuilder(const Graph& g, WeightStore* weights,
                         dnnl::engine* eng, bool use_onednn)
    : g_(g), weights_(weights), eng_(eng), use_onednn_(use_onednn) {
  for (const auto& n : g_.nodes)
    for (const auto& in : n.inputs)
      if (!in.empty()) {
        auto& v = consumers_[in];
        if (v.empty() || v.back() != &n) v.push_back(&n);
      }
  for (const auto& n : g_.nodes) {
    std::set<std::string> distinct(n.inputs.begin(), n.inputs.end());
    for (const auto& in : distinct)
      if (weights_->count(in)) ++weight_readers_[in];
  }
}

int ExecBuilder::ValueOf(const std::string& name) const {
  auto it = value_of_.find(name);
  return it == value_of_.end() ? -1 : it->second;
}

int ExecBuilder::NewValue(const std::string& name, const Shape& shape,
                          const memory::desc& md) {
  Storage s;
  s.bytes = static_cast<int64_t>(md.get_size());
  storages_.push_back(s);
  values_.push_back(
      Value{name, shape, md, static_cast<int>(storages_.size()) - 1});
  return static_cast<int>(values_.size()) - 1;
}

int ExecBuilder::AliasValue(int src, const std::string& name,
                            const Shape& shape, const memory::desc& md) {
  values_.push_back(Value{name, shape, md, values_[src].storage});
  return static_cast<int>(values_.size()) - 1;
}

int ExecBuilder::InLayout(int id, const memory::desc& md) {
  if (values_[id].md == md) return id;
  auto key = std::make_pair(id, DescKey(md));
  auto it = layout_cache_.find(key);
  if (it != layout_cache_.end()) return it->second;
  Value src = values_[id];
  int out = NewValue(src.name, src.shape, md);
  std::unique_ptr<Step> step;
  if (layout_step_) step = layout_step_(src, md);
  if (!step) step = std::make_unique<ReorderStep>(eng_, src.md, md);
  step->reads = {id};
  step->writes = {out};
  step->label = "reorder " + src.name;
  steps_.push_back(std::move(step));
  layout_cache_[key] = out;
  return out;
}

const Tensor* ExecBuilder::Weight(const std::string& name) const {
  auto it = weights_->find(name);
  return it == weights_->end() ? nullptr : &it->second;
}

void ExecBuilder::ReleaseWeights(const Node& node) {
  std::set<std::string> distinct(node.inputs.begin(), node.inputs.end());
  for (const auto& in : distinct) {
    auto it = weight_readers_.find(in);
    if (it == weight_readers_.end()) continue;
    if (--it->second == 0 && !retained_.count(in)) weights_->erase(in);
  }
}

int64_t ExecBuilder::DropUnretainedWeights() {
  int64_t kept = 0;
  for (auto it = weights_->begin(); it != weights_->end();) {
    if (retained_.count(it->first)) {
      kept += it->second.size() * static_cast<int64_t>(sizeof(float));
      ++it;
    } else {
      it = weights_->erase(it);
    }
  }
  return kept;
}

std::vector<const Node*> ExecBuilder::Consumers(
    const std::string& tensor) const {
  auto it = consumers_.find(tensor);
  return it == consumers_.end() ? std::vector<const Node*>{} : it->second;
}

bool ExecBuilder::IsGraphOutput(const std::string& tensor) const {
  for (const auto& o : g_.outputs)
    if (o == tensor) return true;
  return false;
}

const Node* ExecBuilder::SoleConsumer(const std::string& tensor) const {
  for (const auto& o : g_.outputs)
    if (o == tensor) return nullptr;
  auto it = consumers_.find(tensor);
  if (it == consumers_.end() || it->second.size() != 1) return nullptr;
  return it->second[0];
}

OneDnnKernelRegistry& OneDnnKernelRegistry::Global() {
  static OneDnnKernelRegistry* r = new OneDnnKernelRegistry();
  return *r;
}

int OneDnnKernelRegistry::Register(const std::string& op, NodeBuilderFn fn) {
  if (!fns_.emplace(op, fn).second) {
    std::cerr << "oneDNN kernel for '" << op << "' registered twice"
              << std::endl;
    std::abort();
  }
  return static_cast<int>(fns_.size());
}

NodeBuilderFn OneDnnKernelRegistry::Find(const std::string& op) const {
  auto it = fns_.find(op);
  return it == fns_.end() ? nullptr : it->second;
}

std::vector<std::string> OneDnnKernelRegistry::Ops() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fns_) out.push_back(k);
  return out;
}

}  // namespace shoal
