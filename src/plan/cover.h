// Whether a set of boxes covers a tensor exactly once (copied parts) or at
// least once (summed parts), the check VerifyPlan makes for every task
// input. Works on the grid the boxes' own edges cut the tensor into, not on
// elements: memory and time follow the boxes a plan declares, never the
// extents it claims, so a plan naming a tensor of 2^36 elements costs one
// cell, and a plan that would need more than a fixed amount of work to
// check is refused instead of checked for minutes.
#ifndef SHOAL_PLAN_COVER_H_
#define SHOAL_PLAN_COVER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "plan/region.h"

namespace shoal {

// Cells of the edge grid, and cell visits over all boxes, that CheckCover
// accepts; far above any plan the partitioners make (VGG16 channel-split
// over 32 devices needs about 10^5 visits).
constexpr int64_t kMaxCoverCells = int64_t{1} << 26;
constexpr int64_t kMaxCoverVisits = int64_t{1} << 28;

enum class CoverOutcome { kCovered, kGap, kOverlap };

struct CoverResult {
  CoverOutcome outcome = CoverOutcome::kCovered;
  // Meaningful for kGap / kOverlap: one element that is not covered, or
  // covered more than once.
  std::vector<int64_t> at;
};

// `boxes` must each be a valid region of `shape` (CheckRegion). With
// `exclusive`, a cell covered twice is kOverlap. An error when the check
// would exceed the caps above.
StatusOr<CoverResult> CheckCover(const Shape& shape,
                                 const std::vector<Region>& boxes,
                                 bool exclusive);

}  // namespace shoal

#endif  // SHOAL_PLAN_COVER_H_
