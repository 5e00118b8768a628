// A box in a tensor's index space: what a transfer moves, what a weight slice
// keeps. Half-open [begin, end) on every axis.
#ifndef SHOAL_PLAN_REGION_H_
#define SHOAL_PLAN_REGION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graph/shape.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct Region {
  std::vector<int64_t> begin;
  std::vector<int64_t> end;

  static Region Full(const Shape& s);
  // The full box of `s` narrowed to [b, e) on `axis`.
  static Region Slice(const Shape& s, int axis, int64_t b, int64_t e);

  int rank() const { return static_cast<int>(begin.size()); }
  Shape extent() const;
  int64_t elements() const;
  bool empty() const { return elements() == 0; }
  bool operator==(const Region& o) const {
    return begin == o.begin && end == o.end;
  }
  // The same box moved by -origin (coordinates relative to another box).
  Region RelativeTo(const Region& origin) const;
  std::string ToString() const;  // "[0:3, 0:64, 2:10, 0:56]"
};

// The overlap of two boxes of the same rank, if any element is shared.
std::optional<Region> Intersect(const Region& a, const Region& b);
bool Contains(const Region& outer, const Region& inner);
// Whether `r` is a valid box inside `s`.
Status CheckRegion(const Region& r, const Shape& s, const std::string& what);

enum class Merge { kCopy, kSum };

// Copies (or adds) src[src_region] into dst[dst_region]; the extents must be
// equal. Used by transfers and weight slicing alike.
Status CopyRegion(const Tensor& src, const Region& src_region, Tensor* dst,
                  const Region& dst_region, Merge merge);

// The tensor src[region] as a new, dense tensor.
StatusOr<Tensor> ExtractRegion(const Tensor& src, const Region& region);
// The same of `src` read as `view`, a shape of as many elements in the same
// row-major order (plan/plan.h WeightSlice::view): `region` is a box of it.
StatusOr<Tensor> ExtractRegionOfView(const Tensor& src, const Shape& view,
                                     const Region& region);

// Maps a box of `from` onto the same elements of `to`, for a reshape that
// keeps row-major order (Flatten, Reshape). Possible when the box is one
// contiguous run of elements that is also a box of `to`; nullopt otherwise.
std::optional<Region> MapThroughReshape(const Region& r, const Shape& from,
                                        const Shape& to);

}  // namespace shoal

#endif  // SHOAL_PLAN_REGION_H_
