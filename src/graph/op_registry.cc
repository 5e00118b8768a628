#include "graph/op_registry.h"

namespace shoal {

OpRegistry& OpRegistry::Global() {
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

OpSchema& OpRegistry::Register(const std::string& name) {
  auto [it, inserted] = ops_.try_emplace(name, OpSchema(name));
  if (!inserted) {
    std::cerr << "op '" << name << "' registered twice" << std::endl;
    std::abort();  // programmer error
  }
  return it->second;
}

const OpSchema* OpRegistry::Find(const std::string& name) const {
  auto it = ops_.find(name);
  return it == ops_.end() ? nullptr : &it->second;
}

std::vector<std::string> OpRegistry::Names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : ops_) out.push_back(k);
  return out;
}

Status OpSchema::InferShapes(const Node& node, const InputShapes& in,
                             std::vector<Shape>* out) const {
  int n_in = static_cast<int>(node.inputs.size());
  if (n_in < min_inputs_ || n_in > max_inputs_) {
    return ShapeError(node, "takes " + std::to_string(min_inputs_) + ".." +
                                std::to_string(max_inputs_) + " inputs, got " +
                                std::to_string(n_in));
  }
  int n_out = static_cast<int>(node.outputs.size());
  if (n_out < min_outputs_ || n_out > max_outputs_) {
    return ShapeError(node, "has " + std::to_string(n_out) +
                                " outputs, expected " +
                                std::to_string(min_outputs_) + ".." +
                                std::to_string(max_outputs_));
  }
  for (int i = 0; i < min_inputs_; ++i) {
    if (!in.Has(i)) {
      return ShapeError(node,
                        "required input " + std::to_string(i) + " is absent");
    }
  }
  out->assign(node.outputs.size(), Shape{});
  if (!infer_) return Internal("op '" + name_ + "' has no shape function");
  return infer_(node, in, out);
}

const SplitFacts& SplitFactsOf(const std::string& op) {
  static const SplitFacts kNone;
  const OpSchema* s = OpRegistry::Global().Find(op);
  return s == nullptr ? kNone : s->split();
}

bool ActsPerChannel(const Node& n) {
  const SplitFacts& f = SplitFactsOf(n.op);
  return f.per_channel || (f.any_axis && n.inputs.size() == 1);
}

bool ActsPerChannelWithWeights(const Node& n) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  return s != nullptr && s->channel_weights();
}

WeightLayout WeightLayoutOf(const Node& n) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  return s != nullptr ? s->weight_layout(n) : WeightLayout{};
}

std::optional<std::vector<int64_t>> ReducedAxesOf(const Node& n, int64_t rank) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->split().non_reduced || !s->reduced_axes()) {
    return std::nullopt;
  }
  std::vector<int64_t> axes = s->reduced_axes()(n, rank);
  for (int64_t a : axes) {
    if (a < 0 || a >= rank) return std::nullopt;
  }
  return axes;
}

std::optional<std::vector<int64_t>> AxisPermutationOf(const Node& n,
                                                      int64_t rank) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->split().permutes || !s->permutation()) {
    return std::nullopt;
  }
  std::vector<int64_t> perm = s->permutation()(n, rank);
  std::vector<bool> seen(rank, false);
  if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
  for (int64_t a : perm) {
    if (a < 0 || a >= rank || seen[a]) return std::nullopt;
    seen[a] = true;
  }
  return perm;
}

std::optional<std::pair<std::vector<int64_t>, std::vector<int64_t>>> CropOf(
    const Node& n, const Shape& in) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->split().crops || !s->crop()) return std::nullopt;
  std::vector<int64_t> begin, end;
  if (!s->crop()(n, in, &begin, &end) || begin.size() != in.size() ||
      end.size() != in.size()) {
    return std::nullopt;
  }
  for (size_t a = 0; a < in.size(); ++a) {
    if (begin[a] < 0 || end[a] > in[a] || begin[a] >= end[a]) {
      return std::nullopt;
    }
  }
  return std::make_pair(std::move(begin), std::move(end));
}

std::optional<StridedCrop> StridedCropOf(const Node& n, const Shape& in) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->split().strided_crops || !s->strided_crop()) {
    return std::nullopt;
  }
  StridedCrop c;
  if (!s->strided_crop()(n, in, &c) || c.begin.size() != in.size() ||
      c.step.size() != in.size() || c.count.size() != in.size()) {
    return std::nullopt;
  }
  for (size_t a = 0; a < in.size(); ++a) {
    if (c.step[a] < 1 || c.count[a] < 1 || c.begin[a] < 0 ||
        c.begin[a] + (c.count[a] - 1) * c.step[a] >= in[a]) {
      return std::nullopt;
    }
  }
  return c;
}

std::optional<int64_t> SelectedAxisOf(const Node& n, int64_t rank) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->split().selects || !s->selected_axis()) {
    return std::nullopt;
  }
  const int64_t a = s->selected_axis()(n, rank);
  if (a < 0 || a >= rank) return std::nullopt;
  return a;
}

bool Concatenates(const Node& n) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  return s != nullptr && s->concatenates();
}

QuantRole QuantRoleOf(const Node* n) {
  if (n == nullptr) return QuantRole::kNone;
  const OpSchema* s = OpRegistry::Global().Find(n->op);
  return s != nullptr ? s->quant_role() : QuantRole::kNone;
}

Status ShapeError(const Node& node, const std::string& what) {
  return InvalidArgument("node '" + node.name + "' (" + node.op + "): " + what);
}

}  // namespace shoal
