#include "graph/shape_check.h"

namespace shoal {

bool MulWithin(int64_t a, int64_t b, int64_t limit, int64_t* out) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r) || r > limit) return false;
  *out = r;
  return true;
}

StatusOr<int64_t> CheckedElements(const Shape& s, const std::string& what) {
  if (s.size() > static_cast<size_t>(kMaxTensorRank)) {
    return InvalidArgument(what + " has rank " + std::to_string(s.size()) +
                           "; shoal reads tensors of rank " +
                           std::to_string(kMaxTensorRank) + " at most");
  }
  int64_t n = 1;
  for (int64_t d : s) {
    if (d < 0) {
      return InvalidArgument(what + " has a negative extent in shape " +
                             ShapeToString(s));
    }
  }
  // Zero anywhere makes the count 0 whatever the other extents are, so
  // the overflow check below runs only on shapes without a zero.
  for (int64_t d : s) {
    if (d == 0) return int64_t{0};
  }
  for (int64_t d : s) {
    if (!MulWithin(n, d, kMaxTensorElements, &n)) {
      return InvalidArgument(what + " has shape " + ShapeToString(s) +
                             ", more than 2^36 elements (shoal's limit)");
    }
  }
  return n;
}

}  // namespace shoal
