// lcp: the LCP paper's deployment of a branched model (`shoal lcp split`):
// each branch whole on one device (several per device when there are fewer
// devices than branches), the input sent to every branch, and the branches'
// pre-final activations gathered on the hub, which runs the concat, the
// classifier and what follows.
#include <algorithm>
#include <map>
#include <set>

#include "graph/cost.h"
#include "graph/op_registry.h"
#include "lcp/find_classifier.h"
#include "partition/layer_split.h"
#include "partition/plan_builder.h"
#include "partition/strategy.h"

namespace shoal {
namespace {

// The branch of a node named "b<k>/...", or -1.
int BranchOf(const std::string& name) {
  if (name.size() < 3 || name[0] != 'b') return -1;
  const size_t slash = name.find('/');
  if (slash == std::string::npos || slash < 2) return -1;
  int k = 0;
  for (size_t i = 1; i < slash; ++i) {
    if (name[i] < '0' || name[i] > '9') return -1;
    k = k * 10 + (name[i] - '0');
  }
  return k;
}

// The fc layer that reads the concat of the branches' outputs, split by
// input features (lip) over the branches' devices in the concat's order:
// each part is one branch's activations, which stay on its device (the
// builder does not gather a concat of tensors on several devices), so the
// hub no longer receives them all and runs the whole layer; the partial
// sums go to it instead. Only where each branch has a device of its own
// (else a part would span two branches). Returns the layer, or "".
std::string SplitClassifier(const Graph& g, const std::vector<int>& branch_of,
                            const std::vector<int>& device_of,
                            BuildRequest* r) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& concat = g.nodes[i];
    if (branch_of[i] >= 0 || !Concatenates(concat)) continue;
    std::vector<int> group;
    std::set<int> seen;
    for (const auto& in : concat.inputs) {
      const int p = g.ProducerIndex(in);
      const int k = p < 0 ? -1 : branch_of[p];
      if (k < 0 || !seen.insert(device_of[k]).second) return "";
      group.push_back(device_of[k]);
    }
    const auto readers = g.ConsumerIndices(concat.outputs[0]);
    if (group.size() < 2 || readers.size() != 1) return "";
    const Node& fc = g.nodes[readers[0]];
    if (!IsFcLayer(g, fc)) return "";
    r->layers[fc.name] =
        LayerChoice{Scheme::kLip, "LCP: split along the branches", group};
    r->placement.erase(fc.name);
    return fc.name;
  }
  return "";
}

// The model's branches: per node its branch (-1 outside every branch), how
// many there are, and a note for the classifier's decision.
struct Branches {
  std::vector<int> branch_of;
  int count = 0;
  std::string note;
};

StatusOr<Branches> BranchesOf(const Graph& g) {
  Branches b;
  for (const auto& n : g.nodes) {
    b.branch_of.push_back(BranchOf(n.name));
    b.count = std::max(b.count, b.branch_of.back() + 1);
  }
  if (b.count == 0) {
    // An unbranched model is LCP with one branch: everything before the
    // classifier is that branch (what `shoal lcp split --branches 1` makes).
    auto site = FindClassifier(g);
    if (!site.ok()) {
      return InvalidArgument("strategy lcp does not apply to model " + g.name +
                             ": " + site.status().message());
    }
    for (int i : site->trunk) b.branch_of[i] = 0;
    b.count = 1;
    b.note = "; model " + g.name +
             " has no b<k>/ branches, so it is one branch: make K with `shoal "
             "lcp split MODEL --branches K -o M.onnx`";
  }
  return b;
}

// Each branch's work: its MACs and weight elements (unequal branches,
// sized for unequal devices by the cluster Splitter, differ).
StatusOr<std::vector<double>> BranchWork(const Graph& g, const Branches& b) {
  std::vector<double> work(b.count, 0);
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(g));
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (b.branch_of[i] >= 0) {
      work[b.branch_of[i]] +=
          double(cost.nodes[i].macs) + double(cost.nodes[i].weight_elements);
    }
  }
  return work;
}

// Greedy by speed, largest branch first: each branch to the device that
// would finish its branches soonest; ties go to a device other than the
// hub, which already runs the classifier. Returns each branch's device;
// `load` gets how many branches each device runs.
std::vector<int> AssignBranches(const std::vector<double>& work,
                                const PlanOptions& opts,
                                std::vector<int>* load) {
  const int branches = static_cast<int>(work.size());
  const int n = static_cast<int>(opts.devices.size());
  const std::vector<double> shares = NormalizedShares(opts.devices);
  std::vector<int> order(branches);
  for (int k = 0; k < branches; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return work[a] > work[b]; });
  load->assign(n, 0);
  std::vector<int> device_of(branches, 0);
  std::vector<double> busy(n, 0);
  for (int k : order) {
    int best = -1;
    auto key = [&](int d) {
      return std::make_tuple((busy[d] + work[k]) / std::max(shares[d], 1e-12),
                             d == opts.hub, d);
    };
    for (int d = 0; d < n; ++d)
      if (best < 0 || key(d) < key(best)) best = d;
    device_of[k] = best;
    ++(*load)[best];
    busy[best] += work[k];
  }
  return device_of;
}

}  // namespace

static StatusOr<Plan> PlanLcp(const Graph& g, const PlanOptions& opts) {
  ASSIGN_OR_RETURN(Branches b, BranchesOf(g));
  ASSIGN_OR_RETURN(std::vector<double> work, BranchWork(g, b));
  std::vector<int> load;
  const std::vector<int> device_of = AssignBranches(work, opts, &load);
  BuildRequest r = BaseRequest(g, opts);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const int k = b.branch_of[i];
    r.placement[g.nodes[i].name] = {k < 0 ? opts.hub : device_of[k]};
  }
  const std::string classifier = SplitClassifier(g, b.branch_of, device_of, &r);
  ASSIGN_OR_RETURN(Plan p, BuildPlan(r));
  for (auto& t : p.tasks) t.scheme = "lcp";
  for (int k = 0; k < b.count; ++k) {
    p.decisions.push_back(LayerDecision{
        "b" + std::to_string(k) + "/*", "lcp",
        "branch " + std::to_string(k) + " whole on " +
            opts.devices[device_of[k]].name + " (" +
            std::to_string(load[device_of[k]]) + " branch(es) there)"});
  }
  p.decisions.push_back(LayerDecision{
      "classifier", "lcp",
      classifier.empty()
          ? "concat of the pre-final activations and the classifier on the "
            "hub " +
                opts.devices[opts.hub].name + b.note
          : "the fc layer that reads the branches' concat, " + classifier +
                ","
                " split by input features along the branches: each device "
                "multiplies its own branch's activations, and only partial "
                "sums travel" +
                b.note});
  return p;
}

SHOAL_REGISTER_STRATEGY("lcp", 11, PlanLcp);

}  // namespace shoal
