// MaxPool, AveragePool (1-D to 3-D) and GlobalAveragePool.
#include "graph/op_registry.h"
#include "ops/window.h"

namespace shoal {
namespace {

Status InferPool(const Node& node, const InputShapes& in,
                 std::vector<Shape>* out) {
  const Shape& x = in[0];
  if (x.size() < 3 || x.size() > 5) {
    return ShapeError(node,
                      "input must be 3-D to 5-D, got " + ShapeToString(x));
  }
  if (!node.attrs.Has("kernel_shape")) {
    return ShapeError(node, "kernel_shape is required");
  }
  if (node.attrs.GetInt("storage_order", 0) != 0) {
    return Unsupported("storage_order=1 of node '" + node.name + "'");
  }
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  ASSIGN_OR_RETURN(WindowGeometry geo, ResolveWindow(node, spatial, {}));
  for (size_t i = 0; i < spatial.size(); ++i) {
    if (geo.pad_begin[i] >= geo.kernel[i] || geo.pad_end[i] >= geo.kernel[i]) {
      return ShapeError(node, "padding must be smaller than the kernel");
    }
  }
  Shape y = {x[0], x[1]};
  for (int64_t d : geo.OutputSpatial(spatial)) y.push_back(d);
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("MaxPool")
    .Doc("[N, C, spatial...] -> [N, C, out spatial...]; 1 to 3 spatial axes")
    .SplitPerChannel()
    .SplitSpatially()
    .Inputs(1, 1)
    .Attr("kernel_shape")
    .Attr("strides")
    .Attr("pads")
    .Attr("dilations")
    .Attr("ceil_mode")
    .Attr("auto_pad")
    .Attr("storage_order")
    .KeepsSparsity()  // of a ReLU's output: a window of zeros stays zero
    .Infer(InferPool);

SHOAL_REGISTER_OP("AveragePool")
    .Doc("[N, C, spatial...] -> [N, C, out spatial...]; 1 to 3 spatial axes")
    .SplitPerChannel()
    .SplitSpatially()
    .Inputs(1, 1)
    .Attr("kernel_shape")
    .Attr("strides")
    .Attr("pads")
    .Attr("ceil_mode")
    .Attr("auto_pad")
    .Attr("count_include_pad")
    .Infer(InferPool);

Status InferGlobalPool(const Node& node, const InputShapes& in,
                       std::vector<Shape>* out) {
  const Shape& x = in[0];
  if (x.size() < 3) {
    return ShapeError(node,
                      "input must have spatial axes, got " + ShapeToString(x));
  }
  Shape y(x.size(), 1);
  y[0] = x[0];
  y[1] = x[1];
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("GlobalAveragePool")
    .Doc("[N, C, spatial...] -> [N, C, 1...]")
    .SplitPerChannel()
    .Inputs(1, 1)
    .Infer(InferGlobalPool);
SHOAL_REGISTER_OP("GlobalMaxPool")
    .Doc("[N, C, spatial...] -> [N, C, 1...]")
    .SplitPerChannel()
    .Inputs(1, 1)
    .Infer(InferGlobalPool);

}  // namespace
}  // namespace shoal
