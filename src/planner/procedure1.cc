#include "planner/procedure1.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "cluster/swap.h"
#include "plan/plan_cost.h"
#include "planner/joint_milp.h"
#include "util/units.h"

namespace shoal {

namespace {

std::string Ms(double s) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f ms", s * 1e3);
  return buf;
}

// Step 1: a layer whose weights no single device can hold: by the paper's
// rule on a board that swaps (its framework's memory, cluster/swap.h), by
// the worker's own (FitsWhole) on the others.
bool FitsNoDevice(const LatencyModel& m, int64_t bytes) {
  for (const auto& d : m.cluster().devices) {
    const FrameworkMemory* fm = FrameworkMemoryOf(d.board);
    if (fm != nullptr ? !LayerMustSplit(*fm, d.memory_bytes, bytes)
                      : FitsWhole(bytes, d.memory_bytes)) {
      return false;
    }
  }
  return true;
}

// Step 2's split versions: the paper groups layers "using latency of layers
// and their splitted version", so a stage may also be one layer split over
// several consecutive devices of the order. Up to this many devices per
// split, on clusters up to kMostSplitDevices (beyond, whole stages only: the
// DP's cost grows with both).
constexpr int kLargestSplit = 8;
constexpr int kMostSplitDevices = 64;

bool Fixed(const Placement& p) {
  return p.form != Form::kWhole || p.devices[0] >= 0;
}

}  // namespace

Assignment BalancedStages(const UnitPricer& pr, const std::vector<int>& devices,
                          const std::vector<Placement>& fixed) {
  const auto& units = pr.units();
  const int n = static_cast<int>(units.size());
  const int k = static_cast<int>(devices.size());
  if (k == 0) return {};
  const int largest_split =
      pr.model().num_devices() <= kMostSplitDevices ? kLargestSplit : 1;
  // Prefix sums per stage device of time and weights (fixed units count
  // nothing here: their parts keep their own devices busy, below).
  std::vector<std::vector<double>> t(k, std::vector<double>(n + 1, 0));
  std::vector<std::vector<int64_t>> w(k, std::vector<int64_t>(n + 1, 0));
  for (int j = 0; j < k; ++j) {
    for (int u = 0; u < n; ++u) {
      const bool fx = Fixed(fixed[u]);
      double s = 0;
      if (!fx) {
        const Load l = pr.Price(u, Placement{Form::kWhole, {devices[j]}});
        s = l.ok ? l.seconds : 1e30;
      }
      t[j][u + 1] = t[j][u] + s;
      w[j][u + 1] = w[j][u] + (fx ? 0 : units[u].weight_bytes);
    }
  }
  // What step 1's splits already keep each stage device busy with per
  // request: a stage there is that much slower.
  std::map<int, double> fixed_busy;
  for (int u = 0; u < n; ++u) {
    if (!Fixed(fixed[u])) continue;
    for (const auto& [d, s] : pr.Price(u, fixed[u]).busy) fixed_busy[d] += s;
  }
  std::vector<double> extra(k, 0);
  for (int j = 0; j < k; ++j) extra[j] = fixed_busy[devices[j]];
  auto in_secs = [&](int j, int u) {
    // The stage's input arrives from the previous stage's device.
    if (j == 0 || u == 0) return 0.0;
    return pr.model().TransferSeconds(devices[j - 1], devices[j],
                                      units[u - 1].output_bytes);
  };
  // Memory the fixed (split) units already take on each device.
  std::map<int, int64_t> taken;
  for (int u = 0; u < n; ++u) {
    if (!Fixed(fixed[u])) continue;
    for (const auto& [d, wb] : pr.Price(u, fixed[u]).weights) taken[d] += wb;
  }
  std::vector<int64_t> mem(k, 0);  // 0: unlimited
  for (int j = 0; j < k; ++j) {
    const int64_t total = pr.Capacity(devices[j]);
    mem[j] = total == 0 ? 0 : std::max<int64_t>(1, total - taken[devices[j]]);
  }
  // The split version of unit u over devices [j, j + g): the cheaper of
  // its output split and its strips, if its slices fit.
  struct Split {
    Placement p;
    double seconds = 1e30;
  };
  auto split_of = [&](int u, int j, int g) {
    Split best;
    std::vector<int> grp(devices.begin() + j, devices.begin() + j + g);
    for (Form f : {Form::kLop, Form::kSpatial}) {
      const Placement p{f, grp};
      const Load l = pr.Price(u, p);
      if (!l.ok || l.seconds >= best.seconds) continue;
      bool fits = true;
      for (const auto& [d, wb] : l.weights) {
        const auto at = std::find(grp.begin(), grp.end(), d) - grp.begin();
        fits &= at < g && (mem[j + at] == 0 || wb <= mem[j + at]);
      }
      if (fits) best = Split{p, l.seconds};
    }
    return best;
  };
  const double inf = std::numeric_limits<double>::infinity();
  // best[j][i]: the slowest stage when devices [0, j) hold units [0, i).
  std::vector<std::vector<double>> best(k + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> from(k + 1, std::vector<int>(n + 1, 0));
  std::vector<std::vector<Placement>> split(k + 1,
                                            std::vector<Placement>(n + 1));
  best[0][0] = 0;
  for (int j = 1; j <= k; ++j) {
    for (int i = 1; i <= n; ++i) {
      // Units [s, i) whole on device j - 1.
      for (int s = 0; s < i; ++s) {
        if (best[j - 1][s] == inf) continue;
        if (mem[j - 1] > 0 && w[j - 1][i] - w[j - 1][s] > mem[j - 1]) continue;
        const double stage =
            t[j - 1][i] - t[j - 1][s] + in_secs(j - 1, s) + extra[j - 1];
        const double v = std::max(best[j - 1][s], stage);
        if (v < best[j][i]) {
          best[j][i] = v;
          from[j][i] = s;
          split[j][i] = Placement{};
        }
      }
      // Unit i - 1 alone, split over devices [j - g, j).
      if (Fixed(fixed[i - 1])) continue;
      for (int g = 2; g <= std::min(j, largest_split); ++g) {
        if (best[j - g][i - 1] == inf) continue;
        const Split sp = split_of(i - 1, j - g, g);
        if (sp.seconds >= 1e30) continue;
        const double stage =
            sp.seconds + in_secs(j - g, i - 1) +
            *std::max_element(extra.begin() + (j - g), extra.begin() + j);
        const double v = std::max(best[j - g][i - 1], stage);
        if (v < best[j][i]) {
          best[j][i] = v;
          from[j][i] = i - 1;
          split[j][i] = sp.p;
        }
      }
    }
  }
  if (best[k][n] == inf) return {};
  Assignment a(n);
  int end = n;
  for (int j = k; j > 0;) {
    const int b = from[j][end];
    if (!split[j][end].devices.empty()) {
      a[end - 1] = split[j][end];
      j -= static_cast<int>(split[j][end].devices.size());
    } else {
      for (int u = b; u < end; ++u) {
        a[u] = Fixed(fixed[u]) ? fixed[u]
                               : Placement{Form::kWhole, {devices[j - 1]}};
      }
      --j;
    }
    end = b;
  }
  return a;
}

namespace {

// What step 1 decided: the split placement of each layer that fits no
// device (whole on device -1 for the others), its reason, and the devices
// the splits occupy.
struct SplitLayers {
  std::vector<Placement> fixed;
  std::vector<std::string> reasons;
  std::set<int> busy_devices;
};

// Step 1: model parallelism for layers that fit no device, over the
// fewest fastest devices whose slices fit.
StatusOr<SplitLayers> SplitOversizedLayers(const UnitPricer& pr,
                                           const std::vector<int>& order) {
  const auto& units = pr.units();
  const int n = static_cast<int>(units.size());
  const LatencyModel& m = pr.model();
  const int N = m.num_devices();
  SplitLayers s;
  s.fixed.assign(n, Placement{Form::kWhole, {-1}});
  s.reasons.resize(n);
  const auto& devs = m.cluster().devices;
  std::vector<int64_t> used(N, 0);  // weights step 1 put on each device
  auto free_of = [&](int d) {
    return devs[d].memory_bytes == 0 ? std::numeric_limits<int64_t>::max()
                                     : pr.Capacity(d) - used[d];
  };
  for (int u = 0; u < n; ++u) {
    if (!FitsNoDevice(m, units[u].weight_bytes)) continue;
    // The devices with the most memory left, fastest first among equals.
    std::vector<int> roomy = order;
    std::stable_sort(roomy.begin(), roomy.end(),
                     [&](int a, int b) { return free_of(a) > free_of(b); });
    bool placed = false;
    for (int k = 2; k <= N && !placed; ++k) {
      std::vector<int> grp(roomy.begin(), roomy.begin() + k);
      std::sort(grp.begin(), grp.end(), [&](int a, int b) {
        return std::find(order.begin(), order.end(), a) <
               std::find(order.begin(), order.end(), b);
      });
      for (Form f : {Form::kLop, Form::kLip}) {
        const Placement p{f, grp};
        const Load l = pr.Price(u, p);
        if (!l.ok) continue;
        bool fits = true;
        for (const auto& [d, w] : l.weights) fits &= w <= free_of(d);
        if (!fits) continue;
        for (const auto& [d, w] : l.weights) used[d] += w;
        s.fixed[u] = p;
        s.reasons[u] = "Procedure 1 step 1: its weights (" +
                       MiB(units[u].weight_bytes) +
                       ") fit no device's memory, so it is split (" +
                       FormName(f) + ") over " + std::to_string(k) +
                       " devices " + GroupName(m.cluster().PlanDevices(), grp) +
                       " with memory left, parts by speed";
        s.busy_devices.insert(grp.begin(), grp.end());
        placed = true;
        break;
      }
    }
    if (!placed) {
      return FailedPrecondition(
          "layer " + units[u].nodes[0] + " has " + MiB(units[u].weight_bytes) +
          " of weights: no device holds them and, split over the devices "
          "by speed, some device's slice exceeds the memory it has left");
    }
  }
  return s;
}

// The stage counts step 2 tries: every count up to 16 devices, powers of
// two beyond, and always the most stages there can be.
std::vector<int> StageCounts(int num_devices, int num_units) {
  std::vector<int> counts;
  // Split stages let more devices than units take part (small clusters).
  const int most = num_devices <= kMostSplitDevices
                       ? num_devices
                       : std::min(num_devices, num_units);
  for (int k = 1; k <= most; k = (most <= 16 ? k + 1 : k * 2))
    counts.push_back(k);
  if (counts.back() != most) counts.push_back(most);
  return counts;
}

// Step 2: balanced stages; every stage count, two device orders (fastest
// first, and the hub first). Sets `best_k` to the chosen stage count; the
// assignment is empty when no grouping fits.
HeuristicResult BestBalancedStages(const UnitPricer& pr,
                                   const std::vector<int>& order,
                                   const std::vector<Placement>& fixed,
                                   const std::vector<int>& counts,
                                   PlanObjective objective, int* best_k) {
  std::vector<int> hub_first = {pr.hub()};
  for (int d : order)
    if (d != pr.hub()) hub_first.push_back(d);
  HeuristicResult best;
  double best_v = std::numeric_limits<double>::infinity();
  *best_k = 0;
  for (int k : counts) {
    for (const std::vector<int>* ord : {&order, &std::as_const(hub_first)}) {
      std::vector<int> stage_devs(ord->begin(), ord->begin() + k);
      Assignment a = BalancedStages(pr, stage_devs, fixed);
      if (a.empty()) continue;
      Estimate e = EstimateAssignment(pr, a);
      if (!e.ok) continue;
      const double v =
          objective == PlanObjective::kThroughput ? e.period_s : e.latency_s;
      if (v < best_v) {
        best_v = v;
        best.assignment = std::move(a);
        best.estimate = e;
        *best_k = k;
      }
    }
  }
  return best;
}

// Seconds the units placed as `p` take together on its devices.
double StageSeconds(const UnitPricer& pr, const Assignment& a,
                    const Placement& p) {
  double s = 0;
  for (int v = 0; v < static_cast<int>(a.size()); ++v) {
    if (a[v] == p) s += pr.Price(v, p).seconds;
  }
  return s;
}

// Throughput: spare devices replicate the slowest stage while that helps.
// True when some device was added.
bool ReplicateBusiestStages(const UnitPricer& pr, const std::vector<int>& order,
                            const std::set<int>& busy_devices,
                            HeuristicResult* best) {
  const int n = static_cast<int>(pr.units().size());
  std::set<int> used = busy_devices;
  for (const auto& p : best->assignment)
    used.insert(p.devices.begin(), p.devices.end());
  std::vector<int> spare;
  for (int d : order)
    if (!used.count(d)) spare.push_back(d);
  bool replicated = false;
  for (int d : spare) {
    // The stage whose devices are busiest.
    int worst = -1;
    double worst_busy = -1;
    for (int u = 0; u < n; ++u) {
      const Placement& p = best->assignment[u];
      if (p.form != Form::kWhole && p.form != Form::kReplicate) continue;
      const double b = StageSeconds(pr, best->assignment, p);
      if (b > worst_busy) {
        worst_busy = b;
        worst = u;
      }
    }
    if (worst < 0) break;
    Assignment a = best->assignment;
    const Placement old = a[worst];
    Placement grown{Form::kReplicate, old.devices};
    grown.devices.push_back(d);
    for (auto& p : a) {
      if (p == old) p = grown;
    }
    Estimate e = EstimateAssignment(pr, a);
    if (!e.ok || e.period_s >= best->estimate.period_s) break;
    best->assignment = std::move(a);
    best->estimate = e;
    replicated = true;
  }
  return replicated;
}

// Reasons for the units step 1 did not split.
void ExplainStages(const UnitPricer& pr, const std::vector<Placement>& fixed,
                   const Assignment& assignment, int num_stages,
                   std::vector<std::string>* reasons) {
  const int n = static_cast<int>(assignment.size());
  const LatencyModel& m = pr.model();
  std::map<std::vector<int>, int> stage_of;
  // What step 1's parts add to the stage's devices (as BalancedStages
  // counts them).
  std::map<int, double> fixed_busy;
  for (int u = 0; u < n; ++u) {
    if (!Fixed(fixed[u])) continue;
    for (const auto& [d, s] : pr.Price(u, fixed[u]).busy) fixed_busy[d] += s;
  }
  for (int u = 0; u < n; ++u) {
    const Placement& p = assignment[u];
    if (fixed[u].devices[0] >= 0 || fixed[u].form != Form::kWhole) continue;
    if (!stage_of.count(p.devices))
      stage_of[p.devices] = static_cast<int>(stage_of.size());
    double split_s = 0;
    for (int d : p.devices) split_s = std::max(split_s, fixed_busy[d]);
    const double stage_s = StageSeconds(pr, assignment, p) + split_s;
    (*reasons)[u] =
        "Procedure 1 step 2: stage " + std::to_string(stage_of[p.devices]) +
        " of " + std::to_string(num_stages) + " on " +
        GroupName(m.cluster().PlanDevices(), p.devices) +
        (p.form == Form::kReplicate ? " (data-parallel replicas)"
         : p.form != Form::kWhole
             ? std::string(" (its split version, ") + FormName(p.form) + ")"
             : std::string()) +
        ", predicted " + Ms(stage_s) + " per request" +
        (split_s > 0
             ? " (" + Ms(split_s) + " of it its part of step 1's splits)"
             : std::string()) +
        "; stages balanced by predicted latency";
  }
}

}  // namespace

StatusOr<std::vector<Placement>> Procedure1Splits(const UnitPricer& pr) {
  ASSIGN_OR_RETURN(SplitLayers split,
                   SplitOversizedLayers(pr, SpeedOrder(pr.model(), pr.hub())));
  return split.fixed;
}

StatusOr<HeuristicResult> Procedure1(const UnitPricer& pr,
                                     PlanObjective objective) {
  const int n = static_cast<int>(pr.units().size());
  const std::vector<int> order = SpeedOrder(pr.model(), pr.hub());
  ASSIGN_OR_RETURN(SplitLayers split, SplitOversizedLayers(pr, order));
  const std::vector<int> counts = StageCounts(pr.model().num_devices(), n);
  int best_k = 0;
  HeuristicResult best =
      BestBalancedStages(pr, order, split.fixed, counts, objective, &best_k);
  if (best.assignment.empty()) {
    return FailedPrecondition(
        "Procedure 1 found no grouping of the layers into stages whose "
        "weights fit the devices' memory");
  }
  std::string replicas;
  if (objective == PlanObjective::kThroughput &&
      ReplicateBusiestStages(pr, order, split.busy_devices, &best)) {
    replicas = "; spare devices replicate the busiest stages";
  }
  ExplainStages(pr, split.fixed, best.assignment, best_k, &split.reasons);
  best.reasons = std::move(split.reasons);
  best.summary = std::to_string(best_k) + " stage(s) chosen among " +
                 std::to_string(counts.size()) + " stage counts" + replicas;
  return best;
}

}  // namespace shoal
