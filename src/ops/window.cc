#include "ops/window.h"

#include "graph/op_registry.h"

namespace shoal {

int64_t WindowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t pad_begin, int64_t pad_end, int64_t dilation,
                         bool ceil_mode) {
  const int64_t span = (kernel - 1) * dilation + 1;
  const int64_t room = in + pad_begin + pad_end - span;
  if (room < 0) return 0;
  int64_t out = (ceil_mode ? (room + stride - 1) / stride : room / stride) + 1;
  // PyTorch / ONNX rule: the last window must start inside the input or its
  // left padding, not in the right padding.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

std::vector<int64_t> WindowGeometry::OutputSpatial(
    const std::vector<int64_t>& in) const {
  std::vector<int64_t> out(in.size());
  for (size_t i = 0; i < in.size(); ++i)
    out[i] = WindowOutputSize(in[i], kernel[i], stride[i], pad_begin[i],
                              pad_end[i], dilation[i], ceil_mode);
  return out;
}

StatusOr<WindowGeometry> ResolveWindow(const Node& node,
                                       const std::vector<int64_t>& in_spatial,
                                       std::vector<int64_t> kernel) {
  const size_t r = in_spatial.size();
  WindowGeometry w;
  if (node.attrs.Has("kernel_shape")) kernel = node.attrs.GetInts("kernel_shape");
  if (kernel.size() != r) {
    return ShapeError(node, "kernel has " + std::to_string(kernel.size()) +
                                " axes but the input has " + std::to_string(r) +
                                " spatial axes");
  }
  w.kernel = kernel;
  w.stride = node.attrs.GetInts("strides", std::vector<int64_t>(r, 1));
  w.dilation = node.attrs.GetInts("dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads =
      node.attrs.GetInts("pads", std::vector<int64_t>(2 * r, 0));
  if (w.stride.size() != r || w.dilation.size() != r || pads.size() != 2 * r) {
    return ShapeError(node, "strides/dilations/pads do not match " +
                                std::to_string(r) + " spatial axes");
  }
  for (size_t i = 0; i < r; ++i) {
    if (w.kernel[i] <= 0 || w.stride[i] <= 0 || w.dilation[i] <= 0 ||
        pads[i] < 0 || pads[r + i] < 0) {
      return ShapeError(node, "kernel, stride and dilation must be positive "
                              "and pads non-negative");
    }
  }
  w.pad_begin.assign(pads.begin(), pads.begin() + r);
  w.pad_end.assign(pads.begin() + r, pads.end());
  w.ceil_mode = node.attrs.GetInt("ceil_mode", 0) != 0;

  const std::string auto_pad = node.attrs.GetString("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < r; ++i) {
      int64_t out = (in_spatial[i] + w.stride[i] - 1) / w.stride[i];
      int64_t span = (w.kernel[i] - 1) * w.dilation[i] + 1;
      int64_t total =
          std::max<int64_t>(0, (out - 1) * w.stride[i] + span - in_spatial[i]);
      int64_t small = total / 2, big = total - small;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : big;
      w.pad_end[i] = auto_pad == "SAME_UPPER" ? big : small;
    }
  } else if (auto_pad == "VALID") {
    std::fill(w.pad_begin.begin(), w.pad_begin.end(), 0);
    std::fill(w.pad_end.begin(), w.pad_end.end(), 0);
  } else if (auto_pad != "NOTSET") {
    return Unsupported("auto_pad '" + auto_pad + "' of node '" + node.name + "'");
  }
  return w;
}

}  // namespace shoal
