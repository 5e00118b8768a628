// Tensor shapes: a vector of extents, NCHW (or NCDHW) for activations.
#ifndef SHOAL_GRAPH_SHAPE_H_
#define SHOAL_GRAPH_SHAPE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace shoal {

using Shape = std::vector<int64_t>;

// A zero extent makes the count 0 before any product could overflow (a
// hostile file's shape; CheckedElements in graph/shape_check.h bounds the
// rest).
inline int64_t NumElements(const Shape& s) {
  for (int64_t d : s) {
    if (d == 0) return 0;
  }
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Row-major strides of `s`, in elements.
inline std::vector<int64_t> Strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
  return st;
}

// "1x3x224x224"; "scalar" for rank 0.
std::string ShapeToString(const Shape& s);

// Parses "1,3,224,224" (or with 'x'); returns false on malformed text.
bool ParseShape(const std::string& text, Shape* out);

}  // namespace shoal

#endif  // SHOAL_GRAPH_SHAPE_H_
