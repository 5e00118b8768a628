#include "lcp/branch_width.h"

#include <algorithm>
#include <cmath>

namespace shoal {

int64_t BranchWidth(int64_t width, int64_t branches, double fatten_pct) {
  int64_t w = std::max<int64_t>(1, width / std::max<int64_t>(1, branches));
  if (fatten_pct > 0) {
    // The small epsilon keeps 10 * 1.1 at 11, not 10.999...
    w = static_cast<int64_t>(
        std::floor(static_cast<double>(w) * (1.0 + fatten_pct / 100.0) + 1e-9));
  }
  return std::max<int64_t>(1, w);
}

}  // namespace shoal
