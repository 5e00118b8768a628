// The window of a MaxPool or AveragePool as XNNPACK's pooling operators
// take it: ONNX's ceil mode becomes extra padding at the bottom and right.
// Shared by the f32 pooling and the int8 max pooling inside a quantized
// layer's chain (int8_layer.h).
#ifndef SHOAL_ENGINE_XNNPACK_POOL_WINDOW_H_
#define SHOAL_ENGINE_XNNPACK_POOL_WINDOW_H_

#include <cstdint>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct XnnPoolWindow {
  uint32_t pad_top = 0, pad_right = 0, pad_bottom = 0, pad_left = 0;
  uint32_t kernel[2] = {1, 1}, stride[2] = {1, 1}, dilation[2] = {1, 1};
  bool padded = false;
};

// `n`'s window over an NCHW input `xs` giving `ys`; false when XNNPACK's
// output extent would not be `ys`'s.
StatusOr<bool> XnnPoolWindowOf(const Node& n, const Shape& xs, const Shape& ys,
                               XnnPoolWindow* w);

}  // namespace shoal

#endif  // SHOAL_ENGINE_XNNPACK_POOL_WINDOW_H_
