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

// The params of `dq` restricted to `r` of the weight it reads: a per-channel
// scale keeps the channels the region holds.
StatusOr<QuantParams> SliceParams(const Node& dq, const Shape& weight,
                                  const Region& r) {
  ASSIGN_OR_RETURN(QuantParams p, ReadQuantParams(dq, weight));
  if (p.per_tensor()) return p;
  const int64_t a = p.axis;
  QuantParams s;
  s.axis = a;
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
    ASSIGN_OR_RETURN(QuantParams p, SliceParams(dq, src->shape, w.region));
    Graph& frag = t->fragment;
    const std::string name = Int8Name(frag, dq.inputs[0], w.name);
    TensorInfo* folded = frag.FindTensor(w.name);
    if (!folded) {
      return Internal("task " + t->name + " lists weight " + w.name +
                      " that its fragment does not hold");
    }
    folded->kind = TensorKind::kActivation;
    RETURN_IF_ERROR(frag.AddWeight(name, w.region.extent()));
    Node n = dq;
    n.inputs = {name};
    n.outputs = {w.name};
    SetQuantParams(p, &n);
    dequantize.push_back(std::move(n));
    w = WeightSlice{name, dq.inputs[0], w.region};
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
