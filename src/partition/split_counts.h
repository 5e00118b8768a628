// How a whole number of channels, features or elements is divided among
// devices in proportion to their shares. The cost model and the plan builder
// both call this, so the communication a formula predicts and the transfers a
// plan counts are the same numbers.
#ifndef SHOAL_PARTITION_SPLIT_COUNTS_H_
#define SHOAL_PARTITION_SPLIT_COUNTS_H_

#include <cstdint>
#include <vector>

#include "util/status.h"

namespace shoal {

// OK when there is at least one share, every share is finite and > 0, and
// they sum to 1 (within 1e-6).
Status ValidateShares(const std::vector<double>& shares);

// n equal shares of 1/n.
std::vector<double> EqualShares(int n);

// Splits `total` into shares.size() parts proportional to `shares` by the
// largest-remainder method: parts sum exactly to `total`, each is >= 1, and
// each differs from total * share by less than 1 unless lifting a part to 1
// took a unit from another. Ties go to the lower index, so equal shares give
// the larger parts first (10 over 4 devices: 3, 3, 2, 2). Fails when total is
// smaller than the number of parts.
StatusOr<std::vector<int64_t>> SplitCounts(int64_t total,
                                           const std::vector<double>& shares);

}  // namespace shoal

#endif  // SHOAL_PARTITION_SPLIT_COUNTS_H_
