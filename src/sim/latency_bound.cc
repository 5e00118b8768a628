#include "sim/latency_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace shoal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Past this many devices the output device is not tried one by one (n^2
// solves): each device's result is taken to leave over no link, a looser
// bound that holds whichever device the output is on.
constexpr int kMaxOutputChoices = 64;

}  // namespace

double LeastSharedTime(const std::vector<double>& seconds,
                       const std::vector<double>& start,
                       const std::vector<double>& end) {
  // Device d contributes max(0, T - start[d] - end[d]) / seconds[d] of the
  // model by time T; the sum grows piecewise linearly with T. Walk the
  // devices by the time they can begin, adding each one's rate.
  std::vector<int> order;
  for (size_t d = 0; d < seconds.size(); ++d)
    if (seconds[d] > 0 && std::isfinite(seconds[d]))
      order.push_back(static_cast<int>(d));
  auto lag = [&](int d) { return start[d] + end[d]; };
  std::sort(order.begin(), order.end(),
            [&](int a, int b) { return lag(a) < lag(b); });
  double rate = 0, offset = 0;  // sum of 1/t and of lag/t over those begun
  for (size_t i = 0; i < order.size(); ++i) {
    const int d = order[i];
    rate += 1.0 / seconds[d];
    offset += lag(d) / seconds[d];
    const double t = (1.0 + offset) / rate;
    const double next = i + 1 < order.size() ? lag(order[i + 1]) : kInf;
    if (t <= next) return t;
  }
  return kInf;
}

StatusOr<LatencyBound> LeastLatency(const LatencyModel& m, const Graph& g) {
  const int n = m.num_devices();
  if (n == 0) return InvalidArgument("a cluster of no devices");
  std::vector<double> t(n);
  LatencyBound b;
  b.one_device_s = kInf;
  double rate = 0;
  for (int d = 0; d < n; ++d) {
    ASSIGN_OR_RETURN(t[d], m.GraphSeconds(d, g));
    if (t[d] > 0) rate += 1.0 / t[d];
    if (t[d] < b.one_device_s) {
      b.one_device_s = t[d];
      b.fastest_device = d;
    }
  }
  b.compute_s = rate > 0 ? 1.0 / rate : 0;
  b.least_s = kInf;
  std::vector<double> start(n), end(n);
  for (int h = 0; h < n; ++h) {
    const double lh = m.LinkOf(h).latency_s;
    auto consider = [&](double v) {
      if (v < b.least_s) {
        b.least_s = v;
        b.input_device = h;
        b.input_latency_s = lh;
      }
    };
    // The output on the input device: every other device's result
    // leaves over its own link.
    for (int d = 0; d < n; ++d) {
      start[d] = d == h ? 0 : lh;
      end[d] = d == h ? 0 : m.LinkOf(d).latency_s;
    }
    consider(LeastSharedTime(t, start, end));
    // The output on another device o: the input device's own result
    // leaves over its link too, and o's over none.
    if (n > kMaxOutputChoices) {
      for (int d = 0; d < n; ++d) {
        start[d] = d == h ? 0 : lh;
        end[d] = 0;
      }
      consider(LeastSharedTime(t, start, end));
      continue;
    }
    for (int o = 0; o < n; ++o) {
      if (o == h) continue;
      for (int d = 0; d < n; ++d) {
        start[d] = d == h ? 0 : lh;
        end[d] = d == o ? 0 : m.LinkOf(d).latency_s;
      }
      consider(LeastSharedTime(t, start, end));
    }
  }
  return b;
}

}  // namespace shoal
