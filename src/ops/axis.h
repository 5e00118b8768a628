// Axis helpers shared by the layout ops.
#ifndef SHOAL_OPS_AXIS_H_
#define SHOAL_OPS_AXIS_H_

#include <cstdint>

namespace shoal {

// Maps a possibly negative axis into [0, rank); returns -1 if out of range.
inline int64_t NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return -1;
  return axis < 0 ? axis + rank : axis;
}

// Number of elements a Slice keeps along an axis of extent `dim` (ONNX
// clamping rules, negative indices and steps included).
int64_t SliceExtent(int64_t dim, int64_t start, int64_t end, int64_t step);

}  // namespace shoal

#endif  // SHOAL_OPS_AXIS_H_
