// Resize (nearest and linear) with constant scales or sizes, as segmentation
// heads upsample. The importer turns ONNX's scales/sizes inputs into
// attributes; modes shoal does not compute are refused here, by name.
#include <cmath>

#include "graph/op_registry.h"

namespace shoal {
namespace {

Status CheckResizeModes(const Node& node) {
  const std::string mode = node.attrs.GetString("mode", "nearest");
  if (mode != "nearest" && mode != "linear") {
    return Unsupported("Resize mode '" + mode + "' of node '" + node.name +
                       "' (shoal computes nearest and linear)");
  }
  const std::string ct =
      node.attrs.GetString("coordinate_transformation_mode", "half_pixel");
  if (ct != "half_pixel" && ct != "pytorch_half_pixel" &&
      ct != "align_corners" && ct != "asymmetric") {
    return Unsupported("Resize coordinate_transformation_mode '" + ct +
                       "' of node '" + node.name + "'");
  }
  const std::string nm =
      node.attrs.GetString("nearest_mode", "round_prefer_floor");
  if (nm != "round_prefer_floor" && nm != "round_prefer_ceil" &&
      nm != "floor" && nm != "ceil") {
    return ShapeError(node, "unknown nearest_mode '" + nm + "'");
  }
  if (node.attrs.GetInt("antialias", 0) != 0) {
    return Unsupported("Resize antialias=1 of node '" + node.name + "'");
  }
  if (node.attrs.GetInt("exclude_outside", 0) != 0) {
    return Unsupported("Resize exclude_outside=1 of node '" + node.name + "'");
  }
  return Status::Ok();
}

// Output extents: `sizes`, or floor(input * scale) for `scales` (ONNX).
Status InferResize(const Node& node, const InputShapes& in,
                   std::vector<Shape>* out) {
  RETURN_IF_ERROR(CheckResizeModes(node));
  const Shape& x = in[0];
  const Shape sizes = node.attrs.GetInts("sizes");
  const std::vector<float> scales = node.attrs.GetFloats("scales");
  if (sizes.empty() == scales.empty()) {
    return ShapeError(node, "exactly one of scales and sizes is required");
  }
  Shape y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!sizes.empty()) {
      if (sizes.size() != x.size() || sizes[i] <= 0) {
        return ShapeError(node, "sizes " + ShapeToString(sizes) +
                                    " do not fit input " + ShapeToString(x));
      }
      y[i] = sizes[i];
    } else {
      if (scales.size() != x.size() || !(scales[i] > 0)) {
        return ShapeError(node, "scales do not fit input " + ShapeToString(x));
      }
      y[i] = static_cast<int64_t>(
          std::floor(x[i] * static_cast<double>(scales[i])));
      if (y[i] <= 0) return ShapeError(node, "a scale leaves an empty axis");
    }
  }
  (*out)[0] = y;
  return Status::Ok();
}

SHOAL_REGISTER_OP("Resize")
    .Doc(
        "X, constant scales or sizes (one per axis) -> X resized; nearest "
        "or n-linear; half_pixel, pytorch_half_pixel, align_corners, "
        "asymmetric")
    .Attr("mode")
    .Attr("coordinate_transformation_mode")
    .Attr("nearest_mode")
    .Attr("cubic_coeff_a")
    .Attr("exclude_outside")
    .Attr("extrapolation_value")
    .Attr("antialias")
    .Attr("scales")
    .Attr("sizes")
    .Infer(InferResize);

}  // namespace
}  // namespace shoal
