#include "partition/strategy.h"

#include "partition/plan_builder.h"

namespace shoal {

std::vector<std::string> StrategyNames() {
  return {"auto",     "procedure1", "pipeline", "data",    "lop",
          "lip",      "channel",    "filter",   "spatial", "fuse",
          "fuse-ilp", "lcp",        "random"};
}

std::vector<double> NormalizedShares(const std::vector<PlanDevice>& devices) {
  double sum = 0;
  for (const auto& d : devices) sum += d.share;
  std::vector<double> out;
  for (const auto& d : devices) out.push_back(sum > 0 ? d.share / sum : 0.0);
  return out;
}

BuildRequest BaseRequest(const Graph& g, const PlanOptions& opts) {
  BuildRequest r;
  r.graph = &g;
  r.model = opts.model;
  r.devices = opts.devices;
  r.strategy = opts.strategy;
  r.hub = opts.hub;
  r.input_pixels = opts.input_pixels;
  r.broadcast.fanout = opts.broadcast_fanout;
  r.wire = opts.wire;
  r.overlap_halos = opts.overlap_halos;
  r.reduce_on_peers = opts.reduce_on_peers;
  return r;
}

StatusOr<Plan> MakePlan(const Graph& g, const PlanOptions& opts) {
  if (opts.devices.empty()) return InvalidArgument("no devices to plan for");
  if (opts.hub < 0 || opts.hub >= static_cast<int>(opts.devices.size())) {
    return InvalidArgument("input device " + std::to_string(opts.hub) +
                           " is not one of the " +
                           std::to_string(opts.devices.size()) + " devices");
  }
  const std::string& s = opts.strategy;
  if (s == "lop" || s == "lip" || s == "channel" || s == "filter") {
    return PlanLayerSplits(g, opts);
  }
  if (s == "fuse" || s == "fuse-ilp") return PlanFuse(g, opts);
  if (s == "spatial") return PlanSpatial(g, opts);
  if (s == "pipeline") return PlanPipeline(g, opts);
  if (s == "data") return PlanData(g, opts);
  if (s == "lcp") return PlanLcp(g, opts);
  if (s == "auto") return PlanAuto(g, opts);
  if (s == "random") return PlanRandom(g, opts);
  if (s == "procedure1") return PlanProcedure1(g, opts);
  std::string names;
  for (const auto& n : StrategyNames())
    names += (names.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown strategy '" + s + "' (one of: " + names +
                         ")");
}

}  // namespace shoal
