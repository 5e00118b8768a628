#include "lcp/splitter.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>

#include "graph/cost.h"
#include "lcp/find_classifier.h"
#include "lcp/split_branches.h"
#include "util/units.h"

namespace shoal {

StatusOr<LcpSummary> SummarizeSplit(const Graph& original,
                                    const Graph& branched, int64_t branches,
                                    double fatten_pct) {
  LcpSummary s;
  s.model = original.name;
  s.branches = branches;
  s.fatten_pct = fatten_pct;
  ASSIGN_OR_RETURN(GraphCost orig, ComputeGraphCost(original));
  ASSIGN_OR_RETURN(GraphCost all, ComputeGraphCost(branched));
  s.original_params = orig.params;
  s.original_macs = orig.macs;
  s.params = all.params;
  s.macs = all.macs;
  int64_t in = 0;
  for (const auto& t : branched.inputs)
    in += NumElements(branched.FindTensor(t)->shape);
  for (int64_t k = 0; k < branches; ++k) {
    ASSIGN_OR_RETURN(Graph b, ExtractBranch(branched, k));
    ASSIGN_OR_RETURN(GraphCost one, ComputeGraphCost(b));
    s.params_per_branch = std::max(s.params_per_branch, one.params);
    s.macs_per_branch = std::max(s.macs_per_branch, one.macs);
    const int64_t mem = branches == 1
                            ? all.weight_bytes() + all.peak_activation_bytes
                            : one.weight_bytes() + one.peak_activation_bytes;
    s.branch_memory_bytes = std::max(s.branch_memory_bytes, mem);
    s.branch_macs.push_back(one.macs);
    s.branch_weight_bytes.push_back(one.weight_bytes());
    s.branch_memory.push_back(mem);
    const int64_t pre = NumElements(branched.FindTensor(b.outputs[0])->shape);
    s.communication_elements += in + pre;
  }
  return s;
}

StatusOr<SplitterResult> RunSplitter(const Graph& g, const SplitterBudget& b) {
  if (b.division_factor < 2)
    return InvalidArgument("--division-factor must be at least 2, not " +
                           std::to_string(b.division_factor));
  if (b.device_memory_bytes <= 0 || b.device_macs <= 0)
    return InvalidArgument("--device-memory and --device-macs must be > 0");
  ASSIGN_OR_RETURN(ClassifierSite site, FindClassifier(g));
  const Shape& pre = g.FindTensor(site.prefinal)->shape;
  const int64_t pre_width = pre.size() > 1 ? pre[1] : 1;
  SplitterResult r;
  for (int64_t k = 1; k <= pre_width; k *= b.division_factor) {
    ASSIGN_OR_RETURN(Graph split, SplitIntoBranches(g, {k, b.fatten_pct}));
    ASSIGN_OR_RETURN(LcpSummary s, SummarizeSplit(g, split, k, b.fatten_pct));
    const bool mem_ok = s.branch_memory_bytes <= b.device_memory_bytes;
    const bool mac_ok = s.macs_per_branch <= b.device_macs;
    std::ostringstream line;
    line << "K=" << k << ": one branch needs "
         << HumanBytes(s.branch_memory_bytes) << " ("
         << (mem_ok ? "fits" : "over") << " "
         << HumanBytes(b.device_memory_bytes) << ") and "
         << HumanCount(s.macs_per_branch) << " MACs ("
         << (mac_ok ? "fits" : "over") << " " << HumanCount(b.device_macs)
         << ")";
    r.steps.push_back(line.str());
    if (mem_ok && mac_ok) {
      r.graph = std::move(split);
      r.summary = s;
      return r;
    }
  }
  std::string why;
  for (const auto& s : r.steps) why += "\n  " + s;
  return InvalidArgument(
      "no branch count meets the budget of " +
      HumanBytes(b.device_memory_bytes) + " and " + HumanCount(b.device_macs) +
      " MACs per device: dividing by " + std::to_string(b.division_factor) +
      " past the pre-final width " + std::to_string(pre_width) +
      " is not possible;" + why);
}

StatusOr<ClusterSplitResult> RunClusterSplitter(
    const Graph& g, const std::vector<SplitDevice>& devices,
    const ClusterSplitOptions& o) {
  if (devices.empty()) return InvalidArgument("the cluster has no devices");
  if (o.division_factor < 2)
    return InvalidArgument("--division-factor must be at least 2, not " +
                           std::to_string(o.division_factor));
  if (!(o.macs_per_second > 0) || !(o.weight_bytes_per_second > 0))
    return InvalidArgument("the cluster Splitter needs the device rates");
  if (!(o.target_ms >= 0)) return InvalidArgument("--target-ms must be >= 0");
  ASSIGN_OR_RETURN(ClassifierSite site, FindClassifier(g));
  const Shape& pre = g.FindTensor(site.prefinal)->shape;
  const int64_t pre_width = pre.size() > 1 ? pre[1] : 1;
  // Fastest first; among equals, the one with more memory.
  std::vector<SplitDevice> order = devices;
  std::stable_sort(
      order.begin(), order.end(),
      [](const SplitDevice& a, const SplitDevice& b) {
        auto mem = [](const SplitDevice& d) {
          return d.memory_bytes > 0 ? d.memory_bytes
                                    : std::numeric_limits<int64_t>::max();
        };
        return a.speed != b.speed ? a.speed > b.speed : mem(a) > mem(b);
      });
  std::vector<std::string> steps;
  std::optional<ClusterSplitResult> best;
  // Powers of D, and every device at the end (3 devices: 1, 2, 3).
  const int64_t most = std::min<int64_t>(pre_width, order.size());
  std::vector<int64_t> counts;
  for (int64_t k = 1; k < most; k *= o.division_factor) counts.push_back(k);
  counts.push_back(most);
  for (int64_t k : counts) {
    // A branch's work grows with the square of its width (each layer's
    // inputs and outputs both narrow), so widths start at the square root
    // of the speeds; one correction then evens out the predicted times
    // (the first conv, whose input is the image, grows only linearly).
    BranchOptions bo{k, o.fatten_pct, {}};
    for (int64_t i = 0; i < k; ++i) {
      bo.shares.push_back(std::sqrt(order[i].speed));
    }
    auto time_ms = [&](const LcpSummary& s, int64_t i) {
      const double v = order[i].speed;
      return 1e3 * (s.branch_macs[i] / (v * o.macs_per_second) +
                    s.branch_weight_bytes[i] / (v * o.weight_bytes_per_second));
    };
    ASSIGN_OR_RETURN(Graph split, SplitIntoBranches(g, bo));
    ASSIGN_OR_RETURN(LcpSummary s, SummarizeSplit(g, split, k, o.fatten_pct));
    if (std::adjacent_find(bo.shares.begin(), bo.shares.end(),
                           std::not_equal_to<>()) != bo.shares.end()) {
      double mean = 0, worst = 0;
      for (int64_t i = 0; i < k; ++i) {
        mean += time_ms(s, i) / k;
        worst = std::max(worst, time_ms(s, i));
      }
      BranchOptions even = bo;
      for (int64_t i = 0; i < k; ++i) {
        even.shares[i] *= std::sqrt(mean / std::max(time_ms(s, i), 1e-9));
      }
      ASSIGN_OR_RETURN(Graph split2, SplitIntoBranches(g, even));
      ASSIGN_OR_RETURN(LcpSummary s2,
                       SummarizeSplit(g, split2, k, o.fatten_pct));
      double worst2 = 0;
      for (int64_t i = 0; i < k; ++i) worst2 = std::max(worst2, time_ms(s2, i));
      if (worst2 < worst) {
        bo = std::move(even);
        split = std::move(split2);
        s = std::move(s2);
      }
    }
    ClusterSplitResult r;
    bool fits = true, fast = true;
    std::ostringstream line;
    line << "K=" << k << ":";
    for (int64_t i = 0; i < k; ++i) {
      const SplitDevice& d = order[i];
      const double ms = time_ms(s, i);
      const bool mem_ok =
          d.memory_bytes <= 0 || s.branch_memory[i] <= d.memory_bytes;
      fits = fits && mem_ok;
      fast = fast && (o.target_ms <= 0 || ms <= o.target_ms);
      r.devices.push_back(d.name);
      r.predicted_ms.push_back(ms);
      if (i < 4 || i == k - 1) {
        line << (i ? "," : "") << " " << d.name << " "
             << s.branch_memory[i] / 1048576 << " MiB"
             << (mem_ok ? ""
                        : " (over " + std::to_string(d.memory_bytes / 1048576) +
                              ")")
             << " " << static_cast<int64_t>(ms) << " ms";
      } else if (i == 4) {
        line << ", ...";
      }
    }
    line << (fits ? "" : ": a branch does not fit")
         << (fits && !fast ? ": slowest branch over the target" : "")
         << (fits && fast ? ": fits" : "");
    steps.push_back(line.str());
    if (!fits || !fast) continue;
    // Equal speeds make equal branches, which the shares need not say.
    if (std::adjacent_find(bo.shares.begin(), bo.shares.end(),
                           std::not_equal_to<>()) != bo.shares.end()) {
      s.shares = bo.shares;
    }
    r.split.graph = std::move(split);
    r.split.summary = s;
    best = std::move(r);
    if (o.target_ms > 0) break;  // the fewest branches that meet it
  }
  std::string why;
  for (const auto& s : steps) why += "\n  " + s;
  if (!best) {
    return InvalidArgument(
        "no branch count fits the cluster's " + std::to_string(devices.size()) +
        " devices" +
        (o.target_ms > 0
             ? " within " + std::to_string(static_cast<int64_t>(o.target_ms)) +
                   " ms"
             : "") +
        " (branch counts are powers of " + std::to_string(o.division_factor) +
        " and the device count, up to the pre-final width " +
        std::to_string(pre_width) + "):" + why);
  }
  best->split.steps = std::move(steps);
  return std::move(*best);
}

}  // namespace shoal
