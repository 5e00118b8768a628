#include "partition/split_counts.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace shoal {

Status ValidateShares(const std::vector<double>& shares) {
  if (shares.empty()) return InvalidArgument("no device shares given");
  double sum = 0;
  for (size_t d = 0; d < shares.size(); ++d) {
    if (!std::isfinite(shares[d]) || shares[d] <= 0) {
      return InvalidArgument("share of device " + std::to_string(d) + " is " +
                             std::to_string(shares[d]) +
                             "; every share must be > 0");
    }
    sum += shares[d];
  }
  if (std::abs(sum - 1.0) > 1e-6) {
    return InvalidArgument("device shares sum to " + std::to_string(sum) +
                           ", not 1");
  }
  return Status::Ok();
}

std::vector<double> EqualShares(int n) {
  return std::vector<double>(std::max(n, 0), 1.0 / std::max(n, 1));
}

StatusOr<std::vector<int64_t>> SplitCounts(int64_t total,
                                           const std::vector<double>& shares) {
  RETURN_IF_ERROR(ValidateShares(shares));
  const int64_t n = static_cast<int64_t>(shares.size());
  if (total < n) {
    return InvalidArgument("cannot split " + std::to_string(total) + " into " +
                           std::to_string(n) + " parts of at least 1 each");
  }
  // Normalise so that rounding in the shares' sum cannot lose a unit.
  const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
  std::vector<double> ideal(n);
  std::vector<int64_t> parts(n);
  int64_t given = 0;
  for (int64_t d = 0; d < n; ++d) {
    ideal[d] = static_cast<double>(total) * shares[d] / sum;
    parts[d] =
        std::min<int64_t>(static_cast<int64_t>(std::floor(ideal[d])), total);
    given += parts[d];
  }
  if (given > total) return Internal("SplitCounts: floors exceed the total");
  // Largest remainders first; stable, so ties go to the lower index.
  std::vector<int64_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return ideal[a] - parts[a] > ideal[b] - parts[b];
  });
  for (int64_t i = 0; given < total; i = (i + 1) % n, ++given) {
    ++parts[order[i]];
  }
  // A tiny share may round to 0; every device must get work, so take the
  // unit from the part that is furthest above its ideal.
  for (int64_t d = 0; d < n; ++d) {
    while (parts[d] < 1) {
      int64_t donor = -1;
      for (int64_t e = 0; e < n; ++e) {
        if (parts[e] < 2) continue;
        if (donor < 0 || parts[e] - ideal[e] > parts[donor] - ideal[donor]) {
          donor = e;
        }
      }
      if (donor < 0) return Internal("SplitCounts: no part to take from");
      --parts[donor];
      ++parts[d];
    }
  }
  return parts;
}

}  // namespace shoal
