#include "partition/region_maps.h"

namespace shoal {

std::optional<Region> MapBoxThroughReshape(const Region& r, const Shape& from,
                                           const Shape& to) {
  if (r.rank() != static_cast<int>(from.size()) ||
      NumElements(from) != NumElements(to) || NumElements(from) <= 0) {
    return std::nullopt;
  }
  Region out = Region::Full(to);
  size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    // The next group: the fewest axes of each side, at least one of each
    // where any is left, whose extents multiply alike.
    const size_t i0 = i, j0 = j;
    int64_t pf = 1, pt = 1;
    if (i < from.size()) pf *= from[i++];
    if (j < to.size()) pt *= to[j++];
    while (pf != pt) {
      if (pf < pt && i < from.size()) {
        pf *= from[i++];
      } else if (pt < pf && j < to.size()) {
        pt *= to[j++];
      } else {
        return std::nullopt;
      }
    }
    const Shape gf(from.begin() + i0, from.begin() + i);
    const Shape gt(to.begin() + j0, to.begin() + j);
    Region sub;
    sub.begin.assign(r.begin.begin() + i0, r.begin.begin() + i);
    sub.end.assign(r.end.begin() + i0, r.end.begin() + i);
    if (gt.empty()) {
      if (sub.elements() != 1) return std::nullopt;  // axes of extent 1
      continue;
    }
    std::optional<Region> m;
    if (gf.empty()) {
      m = Region::Full(gt);  // new axes of extent 1
    } else {
      m = MapThroughReshape(sub, gf, gt);
    }
    if (!m) return std::nullopt;
    for (size_t a = 0; a < gt.size(); ++a) {
      out.begin[j0 + a] = m->begin[a];
      out.end[j0 + a] = m->end[a];
    }
  }
  return out;
}

Region PermuteBox(const Region& r, const std::vector<int64_t>& perm) {
  Region out = r;
  for (size_t a = 0; a < perm.size(); ++a) {
    out.begin[a] = r.begin[perm[a]];
    out.end[a] = r.end[perm[a]];
  }
  return out;
}

}  // namespace shoal
