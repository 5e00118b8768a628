#include "partition/weight_dequantize.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "graph/quantization.h"

namespace shoal {

WeightDequantizeFold FoldWeightDequantize(const Graph& g) {
  WeightDequantizeFold f;
  f.graph = g;
  Graph& v = f.graph;
  std::vector<Node> kept;
  kept.reserve(v.nodes.size());
  for (Node& n : v.nodes) {
    const TensorInfo* in = QuantRoleOf(&n) == QuantRole::kDequantize &&
                                   n.inputs.size() == 1 && n.outputs.size() == 1
                               ? v.FindTensor(n.inputs[0])
                               : nullptr;
    if (!in || !in->is_weight()) {
      kept.push_back(std::move(n));
      continue;
    }
    TensorInfo& out = v.tensors[n.outputs[0]];
    out.kind = TensorKind::kWeight;
    out.shape = in->shape;
    out.shaped = true;
    f.folded.emplace(n.outputs[0], std::move(n));
  }
  v.nodes = std::move(kept);
  if (!f.empty()) v.DropUnusedWeights();
  return f;
}

namespace {

// The axis of `view` that is axis `a` of `weight`: the same extent, after
// as many elements (an fc weight read as [out, C, H, W] keeps its axis of
// outputs); -1 when the view merges or cuts that axis.
int ViewAxis(const Shape& weight, const Shape& view, int64_t a) {
  int64_t before = 1;
  for (int64_t i = 0; i < a; ++i) before *= weight[i];
  int64_t seen = 1;
  for (size_t b = 0; b < view.size(); ++b) {
    if (seen == before && view[b] == weight[a]) return static_cast<int>(b);
    seen *= view[b];
  }
  return -1;
}

// The params of `dq` restricted to `r` of the weight it reads (of `view`
// of it, when given): a per-channel scale keeps the channels the region
// holds.
StatusOr<QuantParams> SliceParams(const Node& dq, const Shape& weight,
                                  const Shape& view, const Region& r) {
  ASSIGN_OR_RETURN(QuantParams p, ReadQuantParams(dq, weight));
  if (p.per_tensor()) return p;
  int64_t a = p.axis;
  if (!view.empty()) {
    const int b = ViewAxis(weight, view, a);
    if (b < 0) {
      return Unsupported("the per-channel scales of " + dq.name +
                         " run along an axis that the view " +
                         ShapeToString(view) + " of its weight does not keep");
    }
    a = b;
  }
  QuantParams s;
  s.axis = p.axis;  // of the fragment's weight, which keeps the axis
  s.scale.assign(p.scale.begin() + r.begin[a], p.scale.begin() + r.end[a]);
  s.zero_point.assign(p.zero_point.begin() + r.begin[a],
                      p.zero_point.begin() + r.end[a]);
  return s;
}

// A name for the int8 slice in `frag`: the model's own where it is free.
std::string Int8Name(const Graph& frag, const std::string& source,
                     const std::string& folded) {
  if (!frag.FindTensor(source)) return source;
  std::string n = folded + ".int8";
  while (frag.FindTensor(n)) n += "_";
  return n;
}

Status UnfoldTask(const WeightDequantizeFold& fold, const Graph& model,
                  Task* t) {
  std::vector<Node> dequantize;
  for (WeightSlice& w : t->weights) {
    auto it = fold.folded.find(w.source);
    if (it == fold.folded.end()) continue;
    const Node& dq = it->second;
    const TensorInfo* src = model.FindTensor(dq.inputs[0]);
    if (!src || !src->is_weight()) {
      return Internal("task " + t->name + ": the int8 weight " + dq.inputs[0] +
                      " of " + dq.name + " is not a weight of the model");
    }
    ASSIGN_OR_RETURN(QuantParams p,
                     SliceParams(dq, src->shape, w.view, w.region));
    Graph& frag = t->fragment;
    const std::string name = Int8Name(frag, dq.inputs[0], w.name);
    TensorInfo* folded = frag.FindTensor(w.name);
    if (!folded) {
      return Internal("task " + t->name + " lists weight " + w.name +
                      " that its fragment does not hold");
    }
    folded->kind = TensorKind::kActivation;
    // Through a view the slice takes the folded weight's shape.
    RETURN_IF_ERROR(frag.AddWeight(
        name, w.view.empty() ? w.region.extent() : folded->shape));
    Node n = dq;
    n.inputs = {name};
    n.outputs = {w.name};
    SetQuantParams(p, &n);
    dequantize.push_back(std::move(n));
    w = WeightSlice{name, dq.inputs[0], w.region, w.view};
  }
  if (dequantize.empty()) return Status::Ok();
  // The weights' DQs come first: they read nothing the fragment computes.
  t->fragment.nodes.insert(t->fragment.nodes.begin(), dequantize.begin(),
                           dequantize.end());
  return Status::Ok();
}

}  // namespace

Status UnfoldWeightDequantize(const WeightDequantizeFold& fold,
                              const Graph& model, Plan* plan) {
  if (fold.empty()) return Status::Ok();
  for (Task& t : plan->tasks) RETURN_IF_ERROR(UnfoldTask(fold, model, &t));
  return Status::Ok();
}

}  // namespace shoal
