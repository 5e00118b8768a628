// BatchNormalization (inference form), LayerNormalization and LRN.
#include "graph/op_registry.h"

namespace shoal {
namespace {

Status InferBatchNorm(const Node& node, const InputShapes& in,
                      std::vector<Shape>* out) {
  const Shape& x = in[0];
  if (x.size() < 2) return ShapeError(node, "input must have a channel axis");
  if (node.attrs.GetInt("training_mode", 0) != 0) {
    return Unsupported("training_mode=1 of node '" + node.name + "'");
  }
  for (size_t i = 1; i < 5; ++i) {
    if (in[i] != Shape{x[1]}) {
      return ShapeError(node, "parameter " + std::to_string(i) + " is " +
                                  ShapeToString(in[i]) + ", expected [" +
                                  std::to_string(x[1]) + "]");
    }
  }
  (*out)[0] = x;
  return Status::Ok();
}

// Inputs: X, scale, B, mean, var. Mean and var are statistics, not params.
// Kept whole when it survives import (it is folded into the conv before it
// when there is one): splitting it would need its weights sliced.
SHOAL_REGISTER_OP("BatchNormalization")
    .Doc("X [N, C, ...], scale, B, mean, var [C] -> X's shape (inference)")
    .Inputs(5, 5)
    .Attr("epsilon")
    .Attr("momentum")
    .Attr("training_mode")
    .NonParamInput(3)
    .NonParamInput(4)
    .ChannelWeights()
    .Infer(InferBatchNorm);

// Normalises over axes [axis, rank); Scale (and B) have those axes' shape.
Status InferLayerNorm(const Node& node, const InputShapes& in,
                      std::vector<Shape>* out) {
  const Shape& x = in[0];
  const int64_t r = static_cast<int64_t>(x.size());
  const int64_t a = node.attrs.GetInt("axis", -1);
  if (a < -r || a >= r) {
    return ShapeError(node, "axis " + std::to_string(a) +
                                " is out of range for " + ShapeToString(x));
  }
  const int64_t axis = a < 0 ? a + r : a;
  const Shape inner(x.begin() + axis, x.end());
  for (size_t i = 1; i < in.size(); ++i) {
    if (!in.Has(i)) continue;
    const Shape& p = in[i];
    // Scale and B broadcast to the normalised axes.
    bool ok = p.size() <= inner.size();
    for (size_t k = 0; ok && k < p.size(); ++k) {
      const int64_t d = inner[inner.size() - p.size() + k];
      ok = p[k] == d || p[k] == 1;
    }
    if (!ok) {
      return ShapeError(node, std::string(i == 1 ? "Scale " : "B ") +
                                  ShapeToString(p) + " does not broadcast to " +
                                  ShapeToString(inner));
    }
  }
  (*out)[0] = x;
  return Status::Ok();
}

// Inference form: the optional Mean and InvStdDev outputs are not computed.
SHOAL_REGISTER_OP("LayerNormalization")
    .Doc(
        "X [d0, ..., dr-1], Scale and optional B [d(axis), ..., dr-1] -> "
        "X's shape, normalised over axes axis.. (any axis)")
    .SplitOffReducedAxes([](const Node& n, int64_t rank) {
      int64_t a = n.attrs.GetInt("axis", -1);
      if (a < 0) a += rank;
      std::vector<int64_t> axes;
      for (int64_t i = a; i < rank; ++i) axes.push_back(i);
      return axes;
    })
    .Inputs(2, 3)
    .Attr("axis")
    .Attr("epsilon")
    .Attr("stash_type")
    .Infer(InferLayerNorm);

Status InferLrn(const Node& node, const InputShapes& in,
                std::vector<Shape>* out) {
  if (in[0].size() < 3)
    return ShapeError(node, "input must be N, C, spatial...");
  if (node.attrs.GetInt("size", 0) <= 0)
    return ShapeError(node, "size must be positive");
  (*out)[0] = in[0];
  return Status::Ok();
}

SHOAL_REGISTER_OP("LRN")
    .Doc("[N, C, spatial...] -> the same shape; across `size` channels")
    .Inputs(1, 1)
    .Attr("alpha")
    .Attr("beta")
    .Attr("bias")
    .Attr("size")
    .Infer(InferLrn);

}  // namespace
}  // namespace shoal
