// Order statistics of a handful of timings (medians of runs, quantiles of
// probes).
#ifndef SHOAL_UTIL_STATS_H_
#define SHOAL_UTIL_STATS_H_

#include <vector>

namespace shoal {

// The middle value; of an even count, the mean of the two middle values.
// 0 for none.
double Median(std::vector<double> v);

// The q-quantile (0 <= q <= 1), interpolated linearly between the two
// nearest order statistics (q = 0.5 is the median). 0 for none.
double Quantile(std::vector<double> v, double q);

}  // namespace shoal

#endif  // SHOAL_UTIL_STATS_H_
