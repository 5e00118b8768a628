// pipeline: consecutive groups of layers, one group per device, balanced so
// that the slowest stage (MACs over the device's share) is as fast as it can
// be; each device holds only its stage's weights. data: every device holds
// the whole model and requests are dealt in proportion to speed.
#include <algorithm>
#include <limits>

#include "graph/cost.h"
#include "partition/plan_builder.h"
#include "partition/strategy.h"
#include "util/units.h"

namespace shoal {

namespace {

// Cut points of `cost` (in order) into `shares.size()` non-empty groups
// minimising the largest group cost / share: a linear-partition DP.
std::vector<int> BalancedCuts(const std::vector<double>& cost,
                              const std::vector<double>& shares) {
  const int n = static_cast<int>(cost.size());
  const int k = static_cast<int>(shares.size());
  std::vector<double> prefix(n + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[d][i]: first i nodes on devices 0..d-1.
  std::vector<std::vector<double>> best(k + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int>> from(k + 1, std::vector<int>(n + 1, 0));
  best[0][0] = 0;
  for (int d = 1; d <= k; ++d) {
    for (int i = d; i <= n - (k - d); ++i) {
      for (int j = d - 1; j < i; ++j) {
        const double stage = (prefix[i] - prefix[j]) / shares[d - 1];
        const double v = std::max(best[d - 1][j], stage);
        if (v < best[d][i]) {
          best[d][i] = v;
          from[d][i] = j;
        }
      }
    }
  }
  std::vector<int> cuts(k + 1, n);
  for (int d = k; d > 0; --d) cuts[d - 1] = from[d][cuts[d]];
  return cuts;  // group d is [cuts[d], cuts[d+1])
}

}  // namespace

static StatusOr<Plan> PlanPipeline(const Graph& g, const PlanOptions& opts) {
  const int k = static_cast<int>(opts.devices.size());
  const int n = static_cast<int>(g.nodes.size());
  if (n < k) {
    return InvalidArgument("model " + g.name + " has " + std::to_string(n) +
                           " layers, fewer than the " + std::to_string(k) +
                           " pipeline stages asked for");
  }
  // MACs dominate; every node also costs its output size so that stages of
  // MAC-free layers still balance.
  std::vector<double> cost;
  for (const auto& node : g.nodes) {
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g, node));
    cost.push_back(static_cast<double>(c.macs) + c.output_elements);
  }
  const std::vector<double> shares = NormalizedShares(opts.devices);
  const std::vector<int> cuts = BalancedCuts(cost, shares);
  BuildRequest r = BaseRequest(g, opts);
  r.whole_scheme = Scheme::kPipeline;
  for (int d = 0; d < k; ++d) {
    for (int i = cuts[d]; i < cuts[d + 1]; ++i)
      r.placement[g.nodes[i].name] = {d};
  }
  r.output_device = k - 1;
  ASSIGN_OR_RETURN(Plan p, BuildPlan(r));
  for (int d = 0; d < k; ++d) {
    double macs = 0;
    for (int i = cuts[d]; i < cuts[d + 1]; ++i) macs += cost[i];
    p.decisions.push_back(LayerDecision{
        g.nodes[cuts[d]].name + ".." + g.nodes[cuts[d + 1] - 1].name,
        "pipeline",
        "stage " + std::to_string(d) + " on " + opts.devices[d].name + ": " +
            Plural(cuts[d + 1] - cuts[d], "layer") + ", cost " +
            HumanCount(static_cast<int64_t>(macs)) +
            " (MACs + output elements)"});
  }
  return p;
}

static StatusOr<Plan> PlanData(const Graph& g, const PlanOptions& opts) {
  BuildRequest r = BaseRequest(g, opts);
  std::vector<int> all;
  for (size_t d = 0; d < opts.devices.size(); ++d)
    all.push_back(static_cast<int>(d));
  for (const auto& node : g.nodes) r.placement[node.name] = all;
  ASSIGN_OR_RETURN(Plan p, BuildPlan(r));
  // BuildPlan deals the replicas by speed: dealt equally, a pi3 beside a
  // laptop would queue 16 requests for each one the laptop serves.
  for (auto& t : p.tasks) t.scheme = "data";
  const std::vector<int>& deal = p.tasks.at(0).devices;
  std::string how = "requests dealt round robin";
  if (deal.size() != all.size()) {
    how = "requests dealt in proportion to speed:";
    for (size_t d = 0; d < all.size(); ++d) {
      how += (d ? ", " : " ") + opts.devices[d].name + " " +
             std::to_string(std::count(deal.begin(), deal.end(), int(d)));
    }
    how += " of every " + std::to_string(deal.size());
  }
  p.decisions.push_back(LayerDecision{"*", "whole",
                                      "the whole model on each of " +
                                          std::to_string(all.size()) +
                                          " devices, " + how});
  return p;
}

SHOAL_REGISTER_STRATEGY("pipeline", 2, PlanPipeline);
SHOAL_REGISTER_STRATEGY("data", 3, PlanData);

}  // namespace shoal
