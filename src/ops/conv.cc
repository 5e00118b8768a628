// Conv: 1-D/2-D/3-D, stride, padding, dilation, groups (depthwise included).
// Inputs: X [N, C, spatial...], W [M, C/group, k...], optional B [M].
#include <algorithm>

#include "graph/op_registry.h"
#include "ops/window.h"

namespace shoal {
namespace {

Status InferConv(const Node& node, const InputShapes& in,
                 std::vector<Shape>* out) {
  const Shape& x = in[0];
  const Shape& w = in[1];
  if (x.size() < 3 || x.size() > 5) {
    return ShapeError(
        node,
        "input must be 3-D to 5-D (N, C, spatial...), got " + ShapeToString(x));
  }
  if (w.size() != x.size()) {
    return ShapeError(node, "weight " + ShapeToString(w) +
                                " does not match input " + ShapeToString(x));
  }
  const int64_t group = node.attrs.GetInt("group", 1);
  if (group <= 0 || x[1] % group != 0 || w[0] % group != 0) {
    return ShapeError(
        node, "group " + std::to_string(group) + " does not divide channels " +
                  std::to_string(x[1]) + " -> " + std::to_string(w[0]));
  }
  if (w[1] * group != x[1]) {
    return ShapeError(node, "input has " + std::to_string(x[1]) +
                                " channels but the weight expects " +
                                std::to_string(w[1] * group));
  }
  if (in.Has(2) && (in[2].size() != 1 || in[2][0] != w[0])) {
    return ShapeError(node, "bias " + ShapeToString(in[2]) +
                                " does not match " + std::to_string(w[0]) +
                                " output channels");
  }
  std::vector<int64_t> spatial(x.begin() + 2, x.end());
  ASSIGN_OR_RETURN(WindowGeometry geo,
                   ResolveWindow(node, spatial,
                                 std::vector<int64_t>(w.begin() + 2, w.end())));
  if (node.attrs.Has("kernel_shape") &&
      geo.kernel != std::vector<int64_t>(w.begin() + 2, w.end())) {
    return ShapeError(
        node, "kernel_shape does not match the weight " + ShapeToString(w));
  }
  Shape y = {x[0], w[0]};
  for (int64_t d : geo.OutputSpatial(spatial)) y.push_back(d);
  (*out)[0] = y;
  return Status::Ok();
}

OpWork ConvWork(const Node& node, const InputShapes& in,
                const std::vector<Shape>& out) {
  const Shape& w = in[1];
  // Each output element takes (C/group) * prod(kernel) products.
  int64_t per_output = 1;
  for (size_t i = 1; i < w.size(); ++i) per_output *= w[i];
  OpWork work;
  work.macs = NumElements(out[0]) * per_output;
  // im2col: per group, the output pixels by the window's products, times
  // the window's products by the group's output channels.
  const int64_t group = std::max<int64_t>(1, node.attrs.GetInt("group", 1));
  work.gemm.groups = group;
  work.gemm.cols = w[0] / group;
  work.gemm.reduce = per_output;
  work.gemm.rows = work.gemm.cols > 0 ? NumElements(out[0]) / w[0] : 0;
  if (group > 1 && w[1] == 1) {
    work.kind = MacKind::kDepthwise;
  } else if (group == 1 && w.size() == 4 && w[2] == 3 && w[3] == 3) {
    std::vector<int64_t> spatial(in[0].begin() + 2, in[0].end());
    auto geo = ResolveWindow(node, spatial, {3, 3});
    auto ones = [](const std::vector<int64_t>& v) {
      return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
    };
    if (geo.ok() && ones(geo.value().stride) && ones(geo.value().dilation)) {
      work.kind = MacKind::kWinograd3x3;
    }
  }
  return work;
}

SHOAL_REGISTER_OP("Conv")
    .Doc(
        "X [N, C, spatial...], W [M, C/group, kernel...], optional B [M] -> "
        "[N, M, out spatial...]; 1 to 3 spatial axes, grouped and depthwise")
    .SplitByWeight()
    .SplitSpatially()
    .Weight([](const Node& n) {
      WeightLayout l;
      l.out_axis = 0;
      l.in_axis = 1;
      l.groups = n.attrs.GetInt("group", 1);
      l.feature_map = true;
      return l;
    })
    .Inputs(2, 3)
    .Attr("kernel_shape")
    .Attr("strides")
    .Attr("pads")
    .Attr("dilations")
    .Attr("group")
    .Attr("auto_pad")
    .Infer(InferConv)
    .Work(ConvWork);

}  // namespace
}  // namespace shoal
