#include "sim/latency_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string>

namespace shoal {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Past this many devices the output device is not tried one by one (n^2
// solves): each device's result is taken to leave over no link, a looser
// bound that holds whichever device the output is on.
constexpr int kMaxOutputChoices = 64;

// The chain bound of latency_bound.h: the heaviest dependency chain, each
// layer at its least fixed cost plus its arithmetic shared by every device.
void ChainBound(const LatencyModel& m, const Graph& g, LatencyBound* b) {
  const int n = m.num_devices();
  const size_t nodes = g.nodes.size();
  std::map<std::string, int> producer;
  for (size_t i = 0; i < nodes; ++i)
    for (const auto& o : g.nodes[i].outputs) producer[o] = static_cast<int>(i);
  // Per node: its least fixed cost, its shared arithmetic, and its time on
  // each device (for the chain left on one device).
  std::vector<double> fixed(nodes), shared(nodes), best(nodes);
  std::vector<std::vector<double>> whole(nodes, std::vector<double>(n));
  std::vector<int> from(nodes, -1);
  for (size_t i = 0; i < nodes; ++i) {
    auto cost = ComputeNodeCost(g, g.nodes[i]);
    if (!cost.ok()) continue;  // GraphSeconds has priced every node already
    // The node with nothing to compute: what any part of it costs, however
    // small. No name, so no profiled layer answers for it.
    NodeCost none;
    none.op = cost->op;
    none.mac_kind = cost->mac_kind;
    double rate = 0, least_fixed = kInf;
    bool free_somewhere = false;
    for (int d = 0; d < n; ++d) {
      const double f = m.Times(d, none).context_s;
      const double t = m.Times(d, *cost).context_s;
      whole[i][d] = t;
      least_fixed = std::min(least_fixed, f);
      const double work = std::max(0.0, t - f);
      if (work > 0)
        rate += 1.0 / work;
      else
        free_somewhere = true;
    }
    fixed[i] = n > 0 ? least_fixed : 0;
    shared[i] = free_somewhere || rate == 0 ? 0 : 1.0 / rate;
    double before = 0;
    for (const auto& in : g.nodes[i].inputs) {
      auto p = producer.find(in);
      if (p != producer.end() && best[p->second] > before) {
        before = best[p->second];
        from[i] = p->second;
      }
    }
    best[i] = before + fixed[i] + shared[i];
  }
  int last = -1;
  for (size_t i = 0; i < nodes; ++i)
    if (last < 0 || best[i] > best[last]) last = static_cast<int>(i);
  if (last < 0) return;
  std::vector<double> alone(n, 0.0);
  for (int i = last; i >= 0; i = from[i]) {
    b->chain_fixed_s += fixed[i];
    if (fixed[i] > 0) ++b->chain_steps;
    for (int d = 0; d < n; ++d) alone[d] += whole[i][d];
  }
  double latency = kInf, send = kInf, recv = kInf;
  for (int d = 0; d < n; ++d) {
    latency = std::min(latency, m.LinkOf(d).latency_s);
    send = std::min(send, m.SendCpuSeconds(d, 0));
    recv = std::min(recv, m.RecvCpuSeconds(d, 0));
  }
  b->chain_message_s = n > 1 ? latency + send + recv : 0;
  const double spread = best[last] + b->chain_message_s;
  b->chain_s = std::min(*std::min_element(alone.begin(), alone.end()),
                        n > 1 ? spread : kInf);
}

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
  b.shared_s = b.least_s;
  ChainBound(m, g, &b);
  b.least_s = std::min(b.one_device_s, std::max(b.shared_s, b.chain_s));
  return b;
}

}  // namespace shoal
