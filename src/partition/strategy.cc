#include "partition/strategy.h"

#include <algorithm>

#include "graph/op_registry.h"
#include "partition/plan_builder.h"
#include "partition/weight_dequantize.h"
#include "plan/int8_transfers.h"

namespace shoal {

StrategyRegistry& StrategyRegistry::Global() {
  static StrategyRegistry* r = new StrategyRegistry();
  return *r;
}

int StrategyRegistry::Register(const std::string& name, int rank,
                               StrategyFn fn) {
  entries_[name] = Entry{rank, fn};
  return 0;
}

StrategyFn StrategyRegistry::Find(const std::string& name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : it->second.fn;
}

std::vector<std::string> StrategyRegistry::Names() const {
  std::vector<std::pair<int, std::string>> ranked;
  for (const auto& [name, e] : entries_) ranked.push_back({e.rank, name});
  std::sort(ranked.begin(), ranked.end());
  std::vector<std::string> names;
  for (const auto& r : ranked) names.push_back(r.second);
  return names;
}

std::vector<std::string> StrategyNames() {
  return StrategyRegistry::Global().Names();
}

const char* ObjectiveName(PlanObjective o) {
  return o == PlanObjective::kThroughput ? "throughput" : "latency";
}

StatusOr<PlanObjective> ParseObjective(const std::string& name) {
  if (name == "latency") return PlanObjective::kLatency;
  if (name == "throughput") return PlanObjective::kThroughput;
  return InvalidArgument("objective '" + name +
                         "' is not one of: latency, throughput");
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
  r.broadcast.scatter = opts.broadcast_scatter && opts.broadcast_fanout > 0;
  if (r.broadcast.scatter) r.broadcast.chunk_bytes = kDefaultScatterChunkBytes;
  r.wire = opts.wire;
  r.overlap_halos = opts.overlap_halos;
  r.max_overlap_recompute = opts.max_overlap_recompute;
  r.reduce_on_peers = opts.reduce_on_peers;
  r.overlap_reductions = opts.overlap_reductions;
  return r;
}

namespace {

bool HasQuantization(const Graph& g) {
  for (const Node& n : g.nodes) {
    if (QuantRoleOf(&n) != QuantRole::kNone) return true;
  }
  return false;
}

}  // namespace

StatusOr<Plan> MakePlan(const Graph& g, const PlanOptions& opts) {
  if (opts.devices.empty()) return InvalidArgument("no devices to plan for");
  if (opts.hub < 0 || opts.hub >= static_cast<int>(opts.devices.size())) {
    return InvalidArgument("input device " + std::to_string(opts.hub) +
                           " is not one of the " +
                           std::to_string(opts.devices.size()) + " devices");
  }
  const std::string& s = opts.strategy;
  if (StrategyFn fn = StrategyRegistry::Global().Find(s)) {
    if (!HasQuantization(g)) return fn(g, opts);
    // An int8 model: planned on float weights, then given its int8 weights
    // and int8 transfers back (partition/weight_dequantize.h,
    // plan/int8_transfers.h).
    const WeightDequantizeFold fold = FoldWeightDequantize(g);
    ASSIGN_OR_RETURN(Plan p, fn(fold.graph, opts));
    RETURN_IF_ERROR(UnfoldWeightDequantize(fold, g, &p));
    RETURN_IF_ERROR(SendInt8(&p).status());
    return p;
  }
  std::string names;
  for (const auto& n : StrategyNames())
    names += (names.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown strategy '" + s + "' (one of: " + names +
                         ")");
}

}  // namespace shoal
