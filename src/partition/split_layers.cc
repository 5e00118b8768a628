// lop, lip, channel, filter: every splittable layer split the same way
// (output splitting for lop/channel, input splitting for lip/filter); the
// collaborative-execution paper's channel and filter splitting name the conv
// forms, and split fc layers by output and input like its dense methods.
#include "graph/op_registry.h"
#include "partition/layer_split.h"
#include "partition/model_chain.h"
#include "partition/plan_builder.h"
#include "partition/strategy.h"

namespace shoal {

static StatusOr<Plan> PlanLayerSplits(const Graph& g, const PlanOptions& opts) {
  BuildRequest r = BaseRequest(g, opts);
  const std::string& s = opts.strategy;
  const bool output = s == "lop" || s == "channel";
  const bool conv_names = s == "channel" || s == "filter";
  int split = 0;
  std::string first_small;
  for (const auto& n : g.nodes) {
    if (!SplitFactsOf(n.op).by_weight) continue;
    Status why = CheckSplittable(g, n);
    if (!why.ok()) {
      r.layers[n.name] = LayerChoice{Scheme::kWhole, why.message()};
      continue;
    }
    const int64_t units = output ? OutputSplitSize(g, n) : InputUnits(g, n);
    const int64_t nd = static_cast<int64_t>(opts.devices.size());
    if (units < nd) {
      r.layers[n.name] = LayerChoice{
          Scheme::kWhole,
          "kept whole on " + opts.devices[opts.hub].name + ": " +
              std::to_string(units) + (output ? " outputs" : " inputs") +
              " cannot be split over " + std::to_string(nd) + " devices"};
      if (first_small.empty())
        first_small = "layer " + n.name + " " + r.layers[n.name].reason;
      continue;
    }
    Scheme sc = output ? Scheme::kLop : Scheme::kLip;
    if (conv_names && WeightLayoutOf(n).feature_map)
      sc = output ? Scheme::kChannel : Scheme::kFilter;
    r.layers[n.name] =
        LayerChoice{sc, std::string(output ? "output" : "input") +
                            " splitting of every conv and fc layer"};
    ++split;
  }
  if (split == 0) {
    return InvalidArgument(
        "strategy " + s + " does not apply to model " + g.name +
        ": it has no conv or fc layer to split" +
        (first_small.empty() ? "" : " (" + first_small + ")"));
  }
  return BuildPlan(r);
}

SHOAL_REGISTER_STRATEGY("lop", 4, PlanLayerSplits);
SHOAL_REGISTER_STRATEGY("lip", 5, PlanLayerSplits);
SHOAL_REGISTER_STRATEGY("channel", 6, PlanLayerSplits);
SHOAL_REGISTER_STRATEGY("filter", 7, PlanLayerSplits);

}  // namespace shoal
