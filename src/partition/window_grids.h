// The grids of attention windows in a model: where a map [1, H, W, C] is
// reshaped into windows [1, H/w, w, W/w, w, C] (Swin's window partition),
// found from the op registry's facts and the shapes, never op names.
#ifndef SHOAL_PARTITION_WINDOW_GRIDS_H_
#define SHOAL_PARTITION_WINDOW_GRIDS_H_

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace shoal {

struct WindowShape {
  int64_t height = 0, width = 0, window = 0;
  int64_t bands() const { return window > 0 ? height / window : 0; }
};

// Every distinct grid of `g`, in node order: a relayout (Reshape) of a
// [1, H, W, C] tensor into [1, H/w, w, W/w, w, C] with w > 1 dividing both.
std::vector<WindowShape> FindWindowGrids(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_PARTITION_WINDOW_GRIDS_H_
