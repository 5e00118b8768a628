// The width of one layer inside an LCP branch: pure arithmetic, kept apart so
// it can be tested exhaustively and read against the paper's counts.
#ifndef SHOAL_LCP_BRANCH_WIDTH_H_
#define SHOAL_LCP_BRANCH_WIDTH_H_

#include <cstdint>

namespace shoal {

// floor(width / branches), at least 1, then widened by `fatten_pct` percent
// (floor again). Rounding down is the reading that reproduces the paper's
// LeNet split2/4/8 parameter counts (31.5k / 16.1k / 8.8k); the clamp to 1 is
// what its LeNet-split8 needs (conv1 has 6 channels for 8 branches).
int64_t BranchWidth(int64_t width, int64_t branches, double fatten_pct);

// The width of a branch that takes `share` (0 < share <= 1) of every layer:
// floor(width x share), at least 1, then fattened as above. Unequal
// branches, for devices of unequal speed (`shoal lcp split --cluster`).
int64_t BranchWidthShare(int64_t width, double share, double fatten_pct);

}  // namespace shoal

#endif  // SHOAL_LCP_BRANCH_WIDTH_H_
