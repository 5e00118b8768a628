// `shoal lcp split MODEL (--branches K | --device-memory B --device-macs N
// [--division-factor D] | --cluster FILE [--target-ms T]) [--fatten PCT]
// [-o OUT.onnx] [--json]`: the LCP branch transform and the paper's
// Splitter, on one budget or sized for a cluster's devices.
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.h"
#include "cli/lcp_prune_cmd.h"
#include "cli/lcp_train_cmd.h"
#include "cli/plan_common.h"
#include "graph/cost.h"
#include "lcp/split_branches.h"
#include "lcp/splitter.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "onnx/onnx_export.h"
#include "planner/cluster_split.h"
#include "util/units.h"

namespace shoal {
namespace {

struct LcpSplitArgs {
  std::string model;
  std::string input_shape;
  int64_t branches = 0;
  int64_t device_memory = 0;
  int64_t device_macs = 0;
  int64_t division_factor = 2;
  double fatten = 0;
  std::string cluster;
  double target_ms = 0;
  std::string out;
  uint64_t seed = 0;
  bool json = false;
};

void PrintText(const LcpSummary& s, const Graph& g) {
  auto ratio = [](int64_t a, int64_t b) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(2)
      << (b ? static_cast<double>(a) / b : 0.0) << "x";
    return o.str();
  };
  std::cout << "model " << s.model << " -> " << g.name << ": " << s.branches
            << " branches, fattened " << s.fatten_pct << "%, " << g.nodes.size()
            << " nodes\n"
            << "  params  " << HumanCount(s.params) << " (original "
            << HumanCount(s.original_params) << ", "
            << ratio(s.original_params, s.params) << " fewer)\n"
            << "  MACs    " << HumanCount(s.macs) << " (original "
            << HumanCount(s.original_macs) << ", "
            << ratio(s.original_macs, s.macs) << " fewer)\n"
            << "  per branch: " << HumanCount(s.params_per_branch)
            << " params, " << HumanCount(s.macs_per_branch) << " MACs, "
            << HumanBytes(s.branch_memory_bytes)
            << " (weights + peak activations)\n"
            << "  communication per inference: "
            << HumanBytes(s.communication_elements * kBytesPerElement) << " ("
            << HumanCount(s.communication_elements)
            << " elements: input to every branch, pre-final activations to "
               "the classifier)\n";
}

// Exactly one way to choose the branch count, and the flags that go with it.
Status CheckSplitFlags(const LcpSplitArgs& a) {
  const bool by_k = a.branches > 0;
  const bool by_budget = a.device_memory > 0 || a.device_macs > 0;
  const bool by_cluster = !a.cluster.empty();
  if (int(by_k) + int(by_budget) + int(by_cluster) != 1)
    return InvalidArgument(
        "give one of --branches K, --device-memory BYTES --device-macs N, "
        "or --cluster FILE");
  if (a.target_ms != 0 && !by_cluster)
    return InvalidArgument("--target-ms goes with --cluster");
  if (by_budget && (a.device_memory <= 0 || a.device_macs <= 0))
    return InvalidArgument("--device-memory and --device-macs go together");
  return Status::Ok();
}

// The branched model, its summary, the splitter's steps (none with
// --branches) and, with --cluster, the devices it was sized for.
struct SplitOutcome {
  Graph split;
  LcpSummary s;
  std::vector<std::string> steps;
  std::optional<ClusterSplitResult> for_cluster;
};

StatusOr<SplitOutcome> SplitModel(const LcpSplitArgs& a, const Graph& g) {
  SplitOutcome o;
  if (!a.cluster.empty()) {
    ASSIGN_OR_RETURN(Cluster c, LoadCluster(a.cluster));
    ASSIGN_OR_RETURN(
        ClusterSplitResult r,
        SplitForCluster(g, c, a.target_ms, a.fatten, a.division_factor));
    o.split = std::move(r.split.graph);
    o.s = r.split.summary;
    o.steps = r.split.steps;
    o.for_cluster = std::move(r);
  } else if (a.branches > 0) {
    ASSIGN_OR_RETURN(o.split, SplitIntoBranches(g, {a.branches, a.fatten}));
    ASSIGN_OR_RETURN(o.s, SummarizeSplit(g, o.split, a.branches, a.fatten));
  } else {
    SplitterBudget b{a.device_memory, a.device_macs, a.division_factor,
                     a.fatten};
    ASSIGN_OR_RETURN(SplitterResult r, RunSplitter(g, b));
    o.split = std::move(r.graph);
    o.s = r.summary;
    o.steps = r.steps;
  }
  return o;
}

nlohmann::json SplitJson(const SplitOutcome& o) {
  const LcpSummary& s = o.s;
  nlohmann::json j;
  j["model"] = s.model;
  j["branches"] = s.branches;
  j["fatten_pct"] = s.fatten_pct;
  j["params"] = s.params;
  j["macs"] = s.macs;
  j["params_per_branch"] = s.params_per_branch;
  j["macs_per_branch"] = s.macs_per_branch;
  j["original"] = {{"params", s.original_params}, {"macs", s.original_macs}};
  j["communication_elements_per_inference"] = s.communication_elements;
  j["branch_macs"] = s.branch_macs;
  j["branch_memory_bytes"] = s.branch_memory;
  if (!s.shares.empty()) j["shares"] = s.shares;
  if (o.for_cluster) {
    j["devices"] = o.for_cluster->devices;
    j["predicted_ms"] = o.for_cluster->predicted_ms;
    j["steps"] = o.steps;
  }
  return j;
}

// The splitter's steps and why it chose its branch count; nothing with
// --branches.
void PrintSplitterSteps(const LcpSplitArgs& a, const SplitOutcome& o) {
  if (o.steps.empty()) return;
  std::cout << "splitter (division factor " << a.division_factor << "):\n";
  for (const auto& l : o.steps) std::cout << "  " << l << "\n";
  std::cout << "chose " << o.s.branches << " branch"
            << (o.s.branches == 1 ? "" : "es");
  if (!o.for_cluster) {
    std::cout << ": the first count whose branch fits both budgets\n";
  } else {
    std::cout << (a.target_ms > 0
                      ? ": the fewest whose slowest branch meets the target"
                      : ": the most that fit, one per device")
              << "\n  " << ClusterSplitReason(*o.for_cluster) << "\n";
  }
}

Status RunLcpSplit(const LcpSplitArgs& a) {
  RETURN_IF_ERROR(CheckSplitFlags(a));
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  ASSIGN_OR_RETURN(SplitOutcome o, SplitModel(a, m.graph));
  if (!a.out.empty()) {
    Model out{o.split, RandomWeights(o.split, a.seed)};
    RETURN_IF_ERROR(ExportOnnx(out, a.out));
  }
  if (a.json) {
    std::cout << SplitJson(o).dump(2) << "\n";
    return Status::Ok();
  }
  PrintSplitterSteps(a, o);
  PrintText(o.s, o.split);
  if (!a.out.empty()) std::cout << "wrote " << a.out << "\n";
  return Status::Ok();
}

}  // namespace

void AddLcpCommand(CLI::App* app) {
  auto* lcp = app->add_subcommand(
      "lcp", "LCP: split a model into narrow independent branches, train it");
  lcp->require_subcommand(1);
  auto a = std::make_shared<LcpSplitArgs>();
  auto* cmd = lcp->add_subcommand(
      "split", "Branch a model (--branches K, or the Splitter on a budget)");
  cmd->add_option("model", a->model, "Zoo name or path to an .onnx file")
      ->required();
  cmd->add_option("--branches", a->branches, "Number of branches K");
  cmd->add_option("--device-memory", a->device_memory,
                  "Splitter: bytes one device holds (weights + activations)");
  cmd->add_option("--device-macs", a->device_macs,
                  "Splitter: MACs one device may run per inference");
  cmd->add_option("--division-factor", a->division_factor,
                  "Splitter: divide widths by this each step (default 2)");
  cmd->add_option("--fatten", a->fatten,
                  "Widen every in-branch layer by PCT percent");
  cmd->add_option("--cluster", a->cluster,
                  "Splitter: size branches for this cluster's devices (one "
                  "per device, widths by speed, each within its memory)");
  cmd->add_option("--target-ms", a->target_ms,
                  "With --cluster: the fewest branches whose slowest is "
                  "predicted within MS (default: the most that fit)");
  cmd->add_option("-o,--output", a->out,
                  "Write the branched model (seeded weights) as ONNX");
  cmd->add_option("--weights-seed", a->seed, "Seed of the written weights");
  cmd->add_option("--input-shape", a->input_shape,
                  "Input shape, e.g. 1,3,224,224");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunLcpSplit(*a))); });
  AddLcpTrainCommand(lcp);
  AddLcpPruneCommand(lcp);
}

}  // namespace shoal
