#include "partition/link_load.h"

#include <algorithm>
#include <cmath>

#include "plan/broadcast.h"

namespace shoal {
namespace {

void Add(std::vector<int64_t>* to, const std::vector<int64_t>& v) {
  for (size_t d = 0; d < v.size(); ++d) (*to)[d] += v[d];
}

}  // namespace

BroadcastShape BroadcastSends(int devices, int src,
                              const BroadcastSettings& broadcast) {
  // A plan of one task per device, src's sending one tensor to the rest:
  // the trees are the ones plan/broadcast.h builds for real plans. The
  // tensor is a thousand chunks, so that scattered shares are even.
  Plan p;
  p.broadcast = broadcast;
  const int64_t elements = std::max<int64_t>(broadcast.chunk_bytes, 1) * 250;
  for (int d = 0; d < devices; ++d) {
    p.devices.push_back(PlanDevice{"d" + std::to_string(d), 1.0, 0});
    Task t;
    t.id = d;
    t.devices = {d};
    p.tasks.push_back(t);
  }
  for (int d = 0; d < devices; ++d) {
    if (d == src) continue;
    p.transfers.push_back(Transfer{Endpoint{src, "x", Region::Full({elements})},
                                   Endpoint{d, "x", Region::Full({elements})},
                                   Merge::kCopy, ""});
  }
  BroadcastShape shape;
  shape.sends.assign(devices, 0);
  // A hop comes before the hops its receiver relays (WireHops walks down).
  std::vector<int> depth(devices, 0);
  for (const WireHop& h : WireHops(p, 0)) {
    shape.sends[h.from] += static_cast<double>(WireHopBytes(p, h)) /
                           static_cast<double>(4 * elements);
    depth[h.to] = depth[h.from] + 1;
    shape.depth = std::max(shape.depth, depth[h.to]);
  }
  return shape;
}

bool LeavesParts(Scheme prev) {
  return prev == Scheme::kLop || prev == Scheme::kLip || prev == Scheme::kFuse2;
}

LayerLinkTerms LayerLinkLoadTerms(const std::vector<ChainLayer>& chain,
                                  const std::vector<LayerParts>& parts,
                                  size_t i, int devices, int hub,
                                  const BroadcastSettings& broadcast) {
  const ChainLayer& l = chain[i];
  const int n = devices;
  LayerLinkTerms t;
  for (auto* v : {&t.gather, &t.broadcast, &t.lip_after_parts, &t.lip_from_hub,
                  &t.whole_after_parts, &t.reduce, &t.out_lop, &t.out_sums}) {
    v->assign(n, 0);
  }
  // The input elements each device holds as a slice of the previous
  // layer's output (none when this layer does not derive from it channel
  // by channel), and what only the hub has.
  std::vector<int64_t> held(n, 0);
  int64_t hub_only = l.M;
  if (i > 0 && l.reuses_prev && !parts[i - 1].k.empty()) {
    const int64_t reused = l.reuse_elements > 0 ? l.reuse_elements : l.M;
    for (int d = 0; d < n; ++d) {
      held[d] = Portion(reused, parts[i - 1].k[d], chain[i - 1].K);
      hub_only -= held[d];
    }
  }
  const int64_t m_hub = parts[i].m.empty() ? 0 : parts[i].m[hub];
  // What every device reads whole goes out in broadcast trees: from each
  // holder its slice, from the hub what only it has.
  for (int src = 0; src < n; ++src) {
    const int64_t x = held[src] + (src == hub ? hub_only : 0);
    if (x == 0 && src != hub) continue;
    const BroadcastShape shape = BroadcastSends(n, src, broadcast);
    const std::vector<double>& sends = shape.sends;
    t.tree_depth = std::max(t.tree_depth, shape.depth);
    for (int d = 0; d < n; ++d) {
      t.gather[d] += std::llround(static_cast<double>(x) * sends[d]);
      if (src == hub) {
        t.broadcast[d] += std::llround(static_cast<double>(l.M) * sends[d]);
      }
    }
  }
  // LIP after parts reads its slices where they are when they are the
  // slices it splits by (same channels, same shares); otherwise each holder
  // sends the rest of its slice to the devices whose input slices hold it,
  // taken as spread like the input split.
  bool aligned = hub_only == 0 && !parts[i].m.empty();
  for (int d = 0; aligned && d < n; ++d) aligned = held[d] == parts[i].m[d];
  t.lip_after_parts_moves = !aligned;
  for (int d = 0; d < n; ++d) {
    const int64_t m_d = parts[i].m.empty() ? 0 : parts[i].m[d];
    t.lip_after_parts[d] =
        (d == hub ? hub_only - Portion(hub_only, m_hub, l.M) : 0) +
        (aligned ? 0 : Portion(held[d], l.M - m_d, l.M));
    t.lip_from_hub[d] = d == hub ? l.M - m_hub : 0;
    t.whole_after_parts[d] = d == hub ? 0 : held[d];
    if (parts[i].k.empty()) {
      t.reduce[d] = d == hub ? 0 : l.K;  // too few channels to scatter
      t.out_sums[d] = 0;
    } else {
      const int64_t k_d = parts[i].k[d];
      t.reduce[d] = l.K - k_d;
      t.out_sums[d] = d == hub ? 0 : k_d;
      t.out_lop[d] =
          d == hub ? 0 : Portion(l.k_sent > 0 ? l.k_sent : l.K, k_d, l.K);
    }
  }
  return t;
}

std::vector<int64_t> LayerLinkLoad(const LayerLinkTerms& t, size_t i,
                                   size_t layers, Scheme prev, Scheme scheme) {
  std::vector<int64_t> load(t.gather.size(), 0);
  const bool after_parts = i > 0 && LeavesParts(prev);
  const bool last = i + 1 == layers;
  switch (scheme) {
    case Scheme::kLop:
    case Scheme::kFuse1:
      Add(&load, after_parts ? t.gather : t.broadcast);
      if (last && scheme == Scheme::kLop) Add(&load, t.out_lop);
      break;
    case Scheme::kLip:
      Add(&load, after_parts ? t.lip_after_parts : t.lip_from_hub);
      Add(&load, t.reduce);
      if (last) Add(&load, t.out_sums);
      break;
    case Scheme::kFuse2:
      Add(&load, t.reduce);
      if (last) Add(&load, t.out_sums);
      break;
    default:  // whole, on the hub
      if (after_parts) Add(&load, t.whole_after_parts);
      break;
  }
  return load;
}

StatusOr<std::vector<int64_t>> ChainLinkLoads(
    const std::vector<ChainLayer>& chain, const std::vector<Scheme>& schemes,
    const std::vector<double>& shares, int hub,
    const BroadcastSettings& broadcast) {
  // EvaluateChain checks the schemes fit and pair up.
  RETURN_IF_ERROR(EvaluateChain(chain, schemes, shares, hub).status());
  ASSIGN_OR_RETURN(std::vector<LayerParts> parts, SplitChain(chain, shares));
  std::vector<int64_t> loads(shares.size(), 0);
  for (size_t i = 0; i < chain.size(); ++i) {
    const LayerLinkTerms t = LayerLinkLoadTerms(
        chain, parts, i, static_cast<int>(shares.size()), hub, broadcast);
    Add(&loads,
        LayerLinkLoad(t, i, chain.size(),
                      i > 0 ? schemes[i - 1] : Scheme::kWhole, schemes[i]));
  }
  return loads;
}

std::vector<double> LinkTimeScales(const std::vector<double>& rates,
                                   size_t devices) {
  double fastest = 0;
  if (rates.size() == devices) {
    for (double r : rates) fastest = std::max(fastest, r);
  }
  std::vector<double> scale(devices, 1.0);
  if (fastest <= 0) return scale;  // no rates known: loads compare as they are
  for (size_t d = 0; d < devices; ++d) {
    scale[d] = rates[d] > 0 ? fastest / rates[d] : 0.0;  // 0: unlimited
  }
  return scale;
}

int LayerLinkSteps(const LayerLinkTerms& t, size_t i, size_t layers,
                   Scheme prev, Scheme scheme) {
  const bool after_parts = i > 0 && LeavesParts(prev);
  const bool last = i + 1 == layers;
  switch (scheme) {
    case Scheme::kLop:
      return t.tree_depth + (last ? 1 : 0);
    case Scheme::kFuse1:
      return t.tree_depth;
    case Scheme::kLip:
      return (after_parts ? (t.lip_after_parts_moves ? 1 : 0) : 1) + 1 +
             (last ? 1 : 0);
    case Scheme::kFuse2:
      return 1 + (last ? 1 : 0);
    default:
      return after_parts ? 1 : 0;
  }
}

double StepCost(double latency_s, const std::vector<double>& rates) {
  double fastest = 0;
  for (double r : rates) fastest = std::max(fastest, r);
  return latency_s > 0 && fastest > 0 ? latency_s * fastest / 32 : 0;
}

StatusOr<double> ChainLinkTime(const std::vector<ChainLayer>& chain,
                               const std::vector<Scheme>& schemes,
                               const std::vector<double>& shares, int hub,
                               const BroadcastSettings& broadcast,
                               const std::vector<double>& rates,
                               double step_cost) {
  RETURN_IF_ERROR(EvaluateChain(chain, schemes, shares, hub).status());
  ASSIGN_OR_RETURN(std::vector<LayerParts> parts, SplitChain(chain, shares));
  double time = 0;
  const int n = static_cast<int>(shares.size());
  for (size_t i = 0; i < chain.size(); ++i) {
    const Scheme prev = i > 0 ? schemes[i - 1] : Scheme::kWhole;
    const LayerLinkTerms t =
        LayerLinkLoadTerms(chain, parts, i, n, hub, broadcast);
    time += BusiestLinkTime(LayerLinkLoad(t, i, chain.size(), prev, schemes[i]),
                            rates) +
            step_cost * LayerLinkSteps(t, i, chain.size(), prev, schemes[i]);
  }
  return time;
}

double BusiestLinkTime(const std::vector<int64_t>& loads,
                       const std::vector<double>& rates) {
  double most = 0;
  const std::vector<double> scale = LinkTimeScales(rates, loads.size());
  for (size_t d = 0; d < loads.size(); ++d) {
    most = std::max(most, static_cast<double>(loads[d]) * scale[d]);
  }
  return most;
}

}  // namespace shoal
