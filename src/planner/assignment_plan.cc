#include "planner/assignment_plan.h"

#include <random>

#include "graph/op_registry.h"
#include "partition/plan_builder.h"
#include "planner/procedure1.h"
#include "planner/reorder_room.h"

namespace shoal {

namespace {

// Each node's scheme as the assignment places its unit, and why.
std::vector<LayerDecision> UnitDecisions(
    const Graph& g, const std::vector<PlanUnit>& units, const Assignment& a,
    const std::vector<std::string>& reasons,
    const std::vector<PlanDevice>& devs, int hub) {
  std::vector<LayerDecision> out;
  for (size_t u = 0; u < units.size(); ++u) {
    const Placement& p = a[u];
    const bool conv =
        WeightLayoutOf(*g.FindNode(units[u].nodes[0])).feature_map;
    for (size_t i = 0; i < units[u].nodes.size(); ++i) {
      LayerDecision d;
      d.layer = units[u].nodes[i];
      d.reason = reasons[u];
      switch (p.form) {
        case Form::kWhole:
          d.scheme = p.devices[0] == hub ? "whole" : "pipeline";
          break;
        case Form::kReplicate:
          d.scheme = "data";
          break;
        case Form::kLop:
          d.scheme = conv ? "channel" : "lop";
          break;
        case Form::kFuse1:
          d.scheme = "fuse1";
          break;
        case Form::kLip:
        case Form::kFuse2:
          d.scheme = p.form == Form::kFuse2 ? "fuse2" : conv ? "filter" : "lip";
          if (i > 0) {
            d.scheme = "whole";
            d.reason = "on " + devs[hub].name + " after " + units[u].nodes[0] +
                       "'s partial sums are added there";
          }
          break;
        case Form::kSpatial:
          d.scheme = "spatial";
          break;
      }
      if (i > 0 && (p.form == Form::kLop || p.form == Form::kFuse1)) {
        d.reason = "travels with " + units[u].nodes[0] + "'s split";
      }
      out.push_back(std::move(d));
    }
  }
  return out;
}

}  // namespace

std::shared_ptr<const LatencyModel> DefaultLatencyModel(
    const std::vector<PlanDevice>& devices) {
  Cluster c;
  for (const auto& d : devices) {
    DeviceSpec s;
    s.name = d.name;
    s.memory_bytes = d.memory_bytes;
    s.speed = d.share;
    c.devices.push_back(s);
  }
  return std::make_shared<LatencyModel>(LatencyModel::FromCluster(c));
}

StatusOr<Plan> PlanAssignment(const Graph& g, const PlanOptions& opts,
                              const std::vector<PlanUnit>& units,
                              const Assignment& a,
                              const std::vector<std::string>& reasons) {
  ASSIGN_OR_RETURN(BuildRequest r, ToRequest(g, opts, units, a, reasons));
  ASSIGN_OR_RETURN(Plan p, BuildPlan(r));
  // BuildPlan deals replicas by speed, the deal UnitPricer::ReplicaShares
  // priced.
  p.decisions = UnitDecisions(g, units, a, reasons, opts.devices, opts.hub);
  return p;
}
StatusOr<Plan> Procedure1Plan(const Graph& g, const PlanOptions& opts,
                              const std::vector<PlanUnit>& units,
                              const UnitPricer& pr, PlanObjective objective,
                              std::string* memo) {
  return WithReorderRoom(
      pr,
      [&](const UnitPricer& rp) -> StatusOr<Plan> {
        ASSIGN_OR_RETURN(HeuristicResult h, Procedure1(rp, objective));
        return PlanAssignment(g, opts, units, h.assignment, h.reasons);
      },
      memo);
}

Assignment RandomAssignment(const std::vector<PlanUnit>& units, int devices,
                            uint64_t seed,
                            const std::vector<Placement>& fixed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> pick(0, devices - 1);
  Assignment a;
  for (size_t u = 0; u < units.size(); ++u) {
    const Placement drawn{Form::kWhole, {pick(rng)}};
    const bool split = u < fixed.size() && fixed[u].form != Form::kWhole;
    a.push_back(split ? fixed[u] : drawn);
  }
  return a;
}

static StatusOr<Plan> PlanRandom(const Graph& g, const PlanOptions& in) {
  ASSIGN_OR_RETURN(std::vector<PlanUnit> units, MakeUnits(g));
  ASSIGN_OR_RETURN(PlanOptions opts, AutoOptions(in));
  UnitPricer pr(g, units, *opts.latency, opts.hub);
  pr.SetWire(opts.wire, opts.input_pixels);
  // Where no group of devices can hold such a layer (one device), it
  // stays whole and is priced as it fits or pages.
  auto splits = Procedure1Splits(pr);
  const std::vector<Placement> fixed =
      splits.ok() ? splits.value() : std::vector<Placement>{};
  const Assignment a = RandomAssignment(
      units, static_cast<int>(opts.devices.size()), opts.random_seed, fixed);
  std::vector<std::string> reasons(
      units.size(), "random assignment (seed " +
                        std::to_string(opts.random_seed) +
                        "): the collaborative-execution paper's baseline");
  for (size_t u = 0; u < units.size(); ++u) {
    if (a[u].form != Form::kWhole) {
      reasons[u] =
          "split as Procedure 1's step 1 splits it (its weights fit "
          "no device), then the rest at random (seed " +
          std::to_string(opts.random_seed) + ")";
    }
  }
  ASSIGN_OR_RETURN(Plan p, PlanAssignment(g, opts, units, a, reasons));
  p.strategy = "random";
  return p;
}

StatusOr<PlanOptions> AutoOptions(const PlanOptions& in) {
  PlanOptions opts = in;
  std::shared_ptr<const LatencyModel> model =
      in.latency ? in.latency : DefaultLatencyModel(in.devices);
  const int N = static_cast<int>(opts.devices.size());
  if (model->num_devices() != N) {
    return InvalidArgument("the latency model describes " +
                           std::to_string(model->num_devices()) +
                           " devices, the plan " + std::to_string(N));
  }
  for (int d = 0; d < N; ++d)
    opts.devices[d].share = model->MacsPerSecond(d) / kPi3MacsPerSecond;
  opts.latency = model;
  return opts;
}

static StatusOr<Plan> PlanProcedure1(const Graph& g, const PlanOptions& in) {
  ASSIGN_OR_RETURN(PlanOptions opts, AutoOptions(in));
  ASSIGN_OR_RETURN(std::vector<PlanUnit> units, MakeUnits(g));
  UnitPricer pr(g, units, *opts.latency, opts.hub);
  pr.SetWire(opts.wire, opts.input_pixels);
  pr.SetTiles(opts.tiles);
  std::string memo;
  ASSIGN_OR_RETURN(Plan p,
                   Procedure1Plan(g, opts, units, pr, opts.objective, &memo));
  if (!memo.empty())
    p.decisions.insert(p.decisions.begin(),
                       LayerDecision{"*", "procedure1", memo});
  p.strategy = "procedure1";
  p.devices = opts.devices;
  return p;
}

SHOAL_REGISTER_STRATEGY("procedure1", 1, PlanProcedure1);
SHOAL_REGISTER_STRATEGY("random", 12, PlanRandom);

}  // namespace shoal
