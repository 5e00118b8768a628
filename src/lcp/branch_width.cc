#include "lcp/branch_width.h"

#include <algorithm>
#include <cmath>

namespace shoal {

namespace {

int64_t Fattened(int64_t w, double fatten_pct) {
  if (fatten_pct > 0) {
    // The small epsilon keeps 10 * 1.1 at 11, not 10.999...
    w = static_cast<int64_t>(
        std::floor(static_cast<double>(w) * (1.0 + fatten_pct / 100.0) + 1e-9));
  }
  return std::max<int64_t>(1, w);
}

}  // namespace

int64_t BranchWidth(int64_t width, int64_t branches, double fatten_pct) {
  return Fattened(std::max<int64_t>(1, width / std::max<int64_t>(1, branches)),
                  fatten_pct);
}

int64_t BranchWidthShare(int64_t width, double share, double fatten_pct) {
  // The epsilon keeps 12 x 0.25 at 3 where the share was rounded below.
  const double w = std::floor(static_cast<double>(width) * share + 1e-9);
  return Fattened(std::max<int64_t>(1, static_cast<int64_t>(w)), fatten_pct);
}

}  // namespace shoal
