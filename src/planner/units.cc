#include "planner/units.h"

#include <set>

#include "graph/op_registry.h"
#include "partition/layer_split.h"
#include "partition/model_chain.h"
#include "partition/plan_builder.h"
#include "partition/spatial_split.h"

namespace shoal {

namespace {

// Ops the plan builder lets travel with an output split (plan_builder.cc).
bool Travels(const Node& n) {
  const SplitFacts& f = SplitFactsOf(n.op);
  return f.per_channel || f.relayout || (f.any_axis && n.inputs.size() == 1);
}

std::vector<std::string> DataInputs(const Graph& g, const Node& n) {
  std::vector<std::string> out;
  for (const auto& in : n.inputs) {
    if (!in.empty() && !g.tensors.at(in).is_weight()) out.push_back(in);
  }
  return out;
}

int64_t BytesOf(const Graph& g, const std::string& t) {
  return NumElements(g.tensors.at(t).shape) * kBytesPerElement;
}

}  // namespace

StatusOr<std::vector<PlanUnit>> MakeUnits(const Graph& g) {
  std::vector<PlanUnit> units;
  for (const auto& n : g.nodes) {
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g, n));
    const auto ins = DataInputs(g, n);
    if (!units.empty()) {
      PlanUnit& u = units.back();
      const bool follows = ins.size() == 1 && ins[0] == u.output &&
                           u.output != g.outputs[0] &&
                           g.ConsumerIndices(u.output).size() == 1 &&
                           n.outputs.size() == 1 && Travels(n);
      if (follows) {
        u.nodes.push_back(n.name);
        u.weight_bytes += c.weight_bytes();
        u.costs.push_back(std::move(c));
        u.output = n.outputs[0];
        u.output_bytes = BytesOf(g, u.output);
        u.tileable = u.tileable && CheckTileable(g, n).ok();
        continue;
      }
    }
    PlanUnit u;
    u.nodes = {n.name};
    u.inputs = ins;
    u.reads_previous =
        !units.empty() && ins.size() == 1 && ins[0] == units.back().output;
    u.splittable = SplitFactsOf(n.op).by_weight && IsSplittableLayer(g, n) &&
                   ins.size() == 1;
    u.tileable = CheckTileable(g, n).ok() && ins.size() == 1 &&
                 SplitFactsOf(n.op).spatial_halo;
    if (u.splittable) {
      u.out_units = OutputSplitSize(g, n);
      u.in_units = InputUnits(g, n);
    }
    u.weight_bytes = c.weight_bytes();
    for (const auto& in : ins) u.input_bytes += BytesOf(g, in);
    u.output = n.outputs.empty() ? "" : n.outputs[0];
    u.output_bytes = u.output.empty() ? 0 : BytesOf(g, u.output);
    u.head_output_bytes = u.output_bytes;
    u.costs.push_back(std::move(c));
    units.push_back(std::move(u));
  }
  // A pair fuses when the second reads the first's output directly, as the
  // fully-distributed paper's chain says (model_chain.h).
  for (size_t i = 0; i + 1 < units.size(); ++i) {
    const Node* a = g.FindNode(units[i].nodes[0]);
    const Node* b = g.FindNode(units[i + 1].nodes[0]);
    units[i].fusable_with_next =
        units[i].splittable && units[i + 1].splittable &&
        units[i + 1].reads_previous && ReadsDirectly(g, *a, *b);
  }
  return units;
}

}  // namespace shoal
