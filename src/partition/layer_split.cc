#include "partition/layer_split.h"

#include "graph/op_registry.h"

namespace shoal {

namespace {

const Shape& ShapeOf(const Graph& g, const std::string& t) {
  return g.tensors.at(t).shape;
}

bool HasBias(const Node& n) {
  return n.inputs.size() > 2 && !n.inputs[2].empty();
}

// The weight axis that output (or input) splitting cuts.
int WeightAxis(const Node& n, bool output) {
  const WeightLayout l = WeightLayoutOf(n);
  return output ? l.out_axis : l.in_axis;
}

}  // namespace

Status CheckSplittable(const Graph& g, const Node& n) {
  const WeightLayout l = WeightLayoutOf(n);
  if (!SplitFactsOf(n.op).by_weight || !l.any()) {
    return Unsupported(
        "layer " + n.name + " is a " + n.op +
        "; only Conv and Gemm layers are split by output or input");
  }
  if (l.feature_map) {
    if (l.groups != 1) {
      return Unsupported("layer " + n.name + " is a grouped convolution (" +
                         std::to_string(l.groups) +
                         " groups); only group=1 convolutions are split");
    }
    const TensorInfo* w = g.FindTensor(n.inputs[1]);
    if (w == nullptr || !w->is_weight()) {
      return Unsupported("layer " + n.name +
                         " reads its filters from an "
                         "activation, not a weight");
    }
    return Status::Ok();
  }
  const TensorInfo* b = g.FindTensor(n.inputs[1]);
  if (b == nullptr || !b->is_weight()) {
    return Unsupported("layer " + n.name + " multiplies two activations");
  }
  // Rows (tokens) split like one row: each keeps all its rows and a
  // share of the columns.
  const Shape& a = ShapeOf(g, n.inputs[0]);
  if (l.transposed_input || a.size() != 2) {
    return Unsupported("layer " + n.name + " is a " + n.op +
                       " whose input is not [M, K] rows");
  }
  if (HasBias(n)) {
    const TensorInfo* c = g.FindTensor(n.inputs[2]);
    if (c == nullptr || !c->is_weight()) {
      return Unsupported("layer " + n.name + " adds an activation as bias");
    }
  }
  return Status::Ok();
}

bool IsFcLayer(const Graph& g, const Node& n) {
  return CheckSplittable(g, n).ok() && !WeightLayoutOf(n).feature_map;
}

int64_t OutputSplitSize(const Graph& g, const Node& n) {
  return ShapeOf(g, n.outputs[0])[1];
}

int64_t InputSplitSize(const Graph& g, const Node& n) {
  return ShapeOf(g, n.inputs[0])[1];
}

StatusOr<LayerPart> SplitOutput(const Graph& g, const Node& n, int64_t begin,
                                int64_t end) {
  RETURN_IF_ERROR(CheckSplittable(g, n));
  LayerPart p;
  p.node = n;
  const Shape& ws = ShapeOf(g, n.inputs[1]);
  p.weights.push_back(
      WeightSlice{n.inputs[1], n.inputs[1],
                  Region::Slice(ws, WeightAxis(n, true), begin, end)});
  if (HasBias(n)) {
    const Shape& bs = ShapeOf(g, n.inputs[2]);
    const int64_t out = OutputSplitSize(g, n);
    // A bias broadcast over the outputs (a scalar in Gemm) stays whole.
    Region r = Region::Full(bs);
    if (!bs.empty() && bs.back() == out) {
      r.begin.back() = begin;
      r.end.back() = end;
    }
    p.weights.push_back(WeightSlice{n.inputs[2], n.inputs[2], r});
  }
  p.in_region = Region::Full(ShapeOf(g, n.inputs[0]));
  p.out_region = Region::Slice(ShapeOf(g, n.outputs[0]), 1, begin, end);
  return p;
}

StatusOr<LayerPart> SplitInput(const Graph& g, const Node& n, int64_t begin,
                               int64_t end, bool with_bias) {
  RETURN_IF_ERROR(CheckSplittable(g, n));
  LayerPart p;
  p.node = n;
  const Shape& ws = ShapeOf(g, n.inputs[1]);
  p.weights.push_back(
      WeightSlice{n.inputs[1], n.inputs[1],
                  Region::Slice(ws, WeightAxis(n, false), begin, end)});
  if (HasBias(n)) {
    if (with_bias) {
      p.weights.push_back(WeightSlice{n.inputs[2], n.inputs[2],
                                      Region::Full(ShapeOf(g, n.inputs[2]))});
    } else {
      p.node.inputs.resize(2);
    }
  }
  p.in_region = Region::Slice(ShapeOf(g, n.inputs[0]), 1, begin, end);
  p.out_region = Region::Full(ShapeOf(g, n.outputs[0]));
  p.partial = true;
  return p;
}

}  // namespace shoal
