// fuse: the fully-distributed paper's Fig. 6, every fusable pair fused from
// the first layer on, the rest LOP. fuse-ilp: its §4.3, the scheme of every
// layer chosen by an ILP that minimises communication.
#include <algorithm>
#include <cmath>

#include "partition/chain_dp.h"
#include "partition/fuse_ilp.h"
#include "partition/link_load.h"
#include "partition/model_chain.h"
#include "partition/plan_builder.h"
#include "partition/split_counts.h"
#include "partition/strategy.h"
#include "util/units.h"

namespace shoal {

static StatusOr<Plan> PlanFuse(const Graph& g, const PlanOptions& opts) {
  ASSIGN_OR_RETURN(std::vector<ChainLayer> chain, ModelChain(g));
  if (chain.empty()) {
    return InvalidArgument("strategy " + opts.strategy +
                           " does not apply to model " + g.name +
                           ": it has no conv or fc layer to split");
  }
  const std::vector<double> shares = NormalizedShares(opts.devices);
  std::vector<Scheme> schemes(chain.size(), Scheme::kLop);
  std::vector<std::string> reasons(chain.size());
  if (opts.strategy == "fuse") {
    for (size_t i = 0; i < chain.size(); ++i) {
      if (chain[i].fusable_with_next && i + 1 < chain.size()) {
        schemes[i] = Scheme::kFuse1;
        schemes[i + 1] = Scheme::kFuse2;
        reasons[i] =
            "fused with " + chain[i + 1].name + " (first fusable pair)";
        reasons[i + 1] = "fused with " + chain[i].name;
        ++i;
      } else {
        reasons[i] = "LOP: cannot be fused with the next layer";
      }
    }
  } else {
    FuseOptions fo;
    fo.hub = opts.hub;
    fo.time_limit_s = opts.ilp_time_limit_s;
    fo.objective = opts.fuse_objective;
    fo.broadcast = BaseRequest(g, opts).broadcast;
    if (opts.link_rates.size() == opts.devices.size()) {
      fo.link_rates = opts.link_rates;
      fo.link_latency_s = opts.link_latency_s;
    }
    ASSIGN_OR_RETURN(FuseChoice c, SolveFuseIlp(chain, shares, fo));
    // Links without a rate leave the elements as they are
    // (LinkTimeScales): no link's rate to speak of.
    const bool known_rate =
        std::any_of(fo.link_rates.begin(), fo.link_rates.end(),
                    [](double r) { return r > 0; });
    schemes = c.schemes;
    const std::string what =
        fo.objective == FuseObjective::kBytes
            ? "least total communication C = " +
                  HumanCount(c.cost.communication) + " elements"
            : "least link time: each layer's busiest uplink, summed, " +
                  HumanCount(std::llround(c.link_time)) + " elements" +
                  (known_rate ? " at the fastest link's rate"
                              : " (links unknown: each counted alike)");
    for (size_t i = 0; i < chain.size(); ++i) {
      reasons[i] = "chosen by the ILP (" + what +
                   (c.proven_optimal ? ", optimal)" : ", time limit hit)");
    }
  }
  BuildRequest r = BaseRequest(g, opts);
  for (size_t i = 0; i < chain.size(); ++i) {
    r.layers[chain[i].name] = LayerChoice{schemes[i], reasons[i]};
  }
  return BuildPlan(r);
}

SHOAL_REGISTER_STRATEGY("fuse", 9, PlanFuse);
SHOAL_REGISTER_STRATEGY("fuse-ilp", 10, PlanFuse);

}  // namespace shoal
