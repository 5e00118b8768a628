// Where a box of a node's input lands in its output, for the nodes that
// move whole boxes of it: reshapes and permutations of axes. Small pure
// functions (region_maps_test.cc) that the plan builder uses to let a
// transformer's heads ride through its Reshapes and Transposes.
#ifndef SHOAL_PARTITION_REGION_MAPS_H_
#define SHOAL_PARTITION_REGION_MAPS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/region.h"

namespace shoal {

// A reshape from `from` to `to` keeps row-major order, so it splits and
// merges groups of adjacent axes whose extents multiply alike ([T, H*D]
// and [1, T, H, D]: {T} to {1, T}, {H*D} to {H, D}). The box maps when,
// in every group, it is one contiguous run of the group's elements that is
// also a box of the group's new axes: columns [h*D, h'*D) of every row are
// heads [h, h') of every token. nullopt otherwise. Unlike
// MapThroughReshape (plan/region.h), the box need not be one run of the
// whole tensor.
std::optional<Region> MapBoxThroughReshape(const Region& r, const Shape& from,
                                           const Shape& to);

// The box of a permuted tensor: output axis i is input axis perm[i].
Region PermuteBox(const Region& r, const std::vector<int64_t>& perm);

}  // namespace shoal

#endif  // SHOAL_PARTITION_REGION_MAPS_H_
