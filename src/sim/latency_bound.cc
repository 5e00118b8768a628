#include "sim/latency_bound.h"

#include <algorithm>
#include <limits>

namespace shoal {

StatusOr<LatencyBound> LeastLatency(const LatencyModel& m, const Graph& g,
                                    int64_t input_bytes) {
  if (m.num_devices() == 0) return InvalidArgument("a cluster of no devices");
  LatencyBound b;
  double rate = 0;  // models per second, all devices together
  double best_one = std::numeric_limits<double>::infinity();
  double least_in = best_one, least_out = best_one;
  for (int d = 0; d < m.num_devices(); ++d) {
    ASSIGN_OR_RETURN(const double t, m.GraphSeconds(d, g));
    if (t > 0) rate += 1.0 / t;
    // To the device over its own link, as the coordinator sends for it;
    // to itself costs nothing, so a link is priced as from elsewhere.
    const Link& l = m.LinkOf(d);
    const double in =
        l.latency_s +
        (l.bandwidth_bps > 0 ? double(input_bytes) * 8 / l.bandwidth_bps : 0);
    least_in = std::min(least_in, in);
    least_out = std::min(least_out, l.latency_s);
    if (t + in + l.latency_s < best_one) {
      best_one = t + in + l.latency_s;
      b.fastest_device = d;
    }
  }
  b.compute_s = rate > 0 ? 1.0 / rate : 0;
  b.input_s = least_in;
  b.output_s = least_out;
  b.one_device_s = best_one;
  return b;
}

}  // namespace shoal
