// Gather with constant indices and Expand to a constant shape: the indices
// and the shape are attributes in shoal (the ONNX importer folds them).
#include "graph/op_registry.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// `indices` (flat) with shape `indices_shape`; an empty shape is a scalar
// index, which removes the axis.
Status InferGather(const Node& node, const InputShapes& in,
                   std::vector<Shape>* out) {
  const Shape& x = in[0];
  const int64_t r = static_cast<int64_t>(x.size());
  const int64_t axis = NormalizeAxis(node.attrs.GetInt("axis", 0), r);
  if (axis < 0) return ShapeError(node, "axis out of range");
  if (!node.attrs.Has("indices"))
    return ShapeError(node, "indices are required");
  const std::vector<int64_t> idx = node.attrs.GetInts("indices");
  const Shape is = node.attrs.GetInts("indices_shape");
  if (NumElements(is) != static_cast<int64_t>(idx.size())) {
    return ShapeError(node, std::to_string(idx.size()) +
                                " indices do not fill indices_shape " +
                                ShapeToString(is));
  }
  for (int64_t i : idx) {
    if (i < -x[axis] || i >= x[axis]) {
      return ShapeError(node, "index " + std::to_string(i) +
                                  " is out of range for extent " +
                                  std::to_string(x[axis]));
    }
  }
  Shape y(x.begin(), x.begin() + axis);
  y.insert(y.end(), is.begin(), is.end());
  y.insert(y.end(), x.begin() + axis + 1, x.end());
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Gather")
    .Doc(
        "X, constant indices of any shape I -> X's shape with axis `axis` "
        "replaced by I")
    .Attr("axis")
    .Attr("indices")
    .Attr("indices_shape")
    .SplitAsSelection([](const Node& n, int64_t rank) {
      return NormalizeAxis(n.attrs.GetInt("axis", 0), rank);
    })
    .Infer(InferGather);

// numpy broadcast of the input's shape with `shape`.
Status InferExpand(const Node& node, const InputShapes& in,
                   std::vector<Shape>* out) {
  const Shape& x = in[0];
  if (!node.attrs.Has("shape")) return ShapeError(node, "shape is required");
  const Shape s = node.attrs.GetInts("shape");
  const size_t r = std::max(x.size(), s.size());
  Shape y(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t dx = i + x.size() >= r ? x[i + x.size() - r] : 1;
    const int64_t ds = i + s.size() >= r ? s[i + s.size() - r] : 1;
    if (dx != ds && dx != 1 && ds != 1) {
      return ShapeError(
          node, ShapeToString(x) + " does not expand to " + ShapeToString(s));
    }
    y[i] = dx == 1 ? ds : dx;
  }
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Expand")
    .Doc("X, constant shape -> numpy broadcast of X's shape and shape")
    .Attr("shape")
    .Infer(InferExpand);

}  // namespace
}  // namespace shoal
