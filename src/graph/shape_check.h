// Overflow-safe element counts for shapes that come from files or peers
// (plans, .npy, ONNX, RPCs): a shape is checked here before anything
// allocates or indexes by it, so [2^62, 2^62] is an error, not a wrapped
// count and a heap overrun.
#ifndef SHOAL_GRAPH_SHAPE_CHECK_H_
#define SHOAL_GRAPH_SHAPE_CHECK_H_

#include <cstdint>
#include <string>

#include "graph/shape.h"
#include "util/status.h"

namespace shoal {

// No device shoal targets holds a tensor this large (256 GiB as float32);
// the cap also keeps byte counts (elements x 8) and strides far from
// int64 overflow everywhere downstream.
constexpr int64_t kMaxTensorElements = int64_t{1} << 36;
// ONNX allows any rank; shoal's ops use at most 5 (NCDHW). The cap bounds
// per-axis loops over peer-supplied regions.
constexpr int kMaxTensorRank = 16;

// a * b, or false when it would exceed `limit` (both non-negative).
bool MulWithin(int64_t a, int64_t b, int64_t limit, int64_t* out);

// The element count of `s`; an error naming `what` when an extent is
// negative, the rank is over kMaxTensorRank or the count is over
// kMaxTensorElements.
StatusOr<int64_t> CheckedElements(const Shape& s, const std::string& what);

inline Status CheckShape(const Shape& s, const std::string& what) {
  return CheckedElements(s, what).status();
}

}  // namespace shoal

#endif  // SHOAL_GRAPH_SHAPE_CHECK_H_
