// Sliding-window geometry shared by convolution and pooling: small pure
// functions (DeepThings style), unit-tested exhaustively in window_test.cc.
#ifndef SHOAL_OPS_WINDOW_H_
#define SHOAL_OPS_WINDOW_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

// Output extent of one spatial axis.
int64_t WindowOutputSize(int64_t in, int64_t kernel, int64_t stride,
                         int64_t pad_begin, int64_t pad_end, int64_t dilation,
                         bool ceil_mode);

// The resolved geometry of a conv or pool node over `spatial` axes.
struct WindowGeometry {
  std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end;
  bool ceil_mode = false;
  std::vector<int64_t> OutputSpatial(const std::vector<int64_t>& in) const;
};

// Reads kernel_shape (or takes `kernel` when the op gets it from a weight),
// strides, dilations, pads, auto_pad and ceil_mode; resolves SAME_* padding
// against the input's spatial extents.
StatusOr<WindowGeometry> ResolveWindow(const Node& node,
                                       const std::vector<int64_t>& in_spatial,
                                       std::vector<int64_t> kernel);

}  // namespace shoal

#endif  // SHOAL_OPS_WINDOW_H_
