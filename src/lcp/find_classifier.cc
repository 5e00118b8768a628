#include "lcp/find_classifier.h"

#include <set>

#include "graph/op_registry.h"

namespace shoal {
namespace {

// A Conv, Gemm or MatMul: an op whose weight holds channels
// (graph/op_registry.h, WeightLayout).
bool IsLayer(const Node& n) { return WeightLayoutOf(n).any(); }

std::vector<std::string> ActivationInputs(const Graph& g, const Node& n) {
  std::vector<std::string> out;
  for (const auto& in : n.inputs) {
    const TensorInfo* t = in.empty() ? nullptr : g.FindTensor(in);
    if (t && !t->is_weight()) out.push_back(in);
  }
  return out;
}

}  // namespace

StatusOr<ClassifierSite> FindClassifier(const Graph& g) {
  if (g.outputs.size() != 1) {
    return InvalidArgument("no classifier to merge on: model '" + g.name +
                           "' has " + std::to_string(g.outputs.size()) +
                           " outputs; LCP needs exactly one");
  }
  ClassifierSite site;
  std::set<int> tail;
  std::string t = g.outputs[0];
  while (true) {
    const int idx = g.ProducerIndex(t);
    if (idx < 0) {
      return InvalidArgument("no classifier to merge on: output '" +
                             g.outputs[0] +
                             "' is not produced by a Conv, Gemm or MatMul");
    }
    const Node& n = g.nodes[idx];
    const auto acts = ActivationInputs(g, n);
    if (!g.WeightInputs(n).empty()) {
      if (!IsLayer(n) || acts.size() != 1) {
        return InvalidArgument(
            "no classifier to merge on: the output is "
            "reached through node '" +
            n.name + "' (" + n.op + "), not a Conv, Gemm or MatMul layer");
      }
      site.classifier = idx;
      site.prefinal = acts[0];
      break;
    }
    if (acts.size() != 1 || n.outputs.size() != 1) {
      return InvalidArgument(
          "no classifier to merge on: the output is reached through node '" +
          n.name + "' (" + n.op + ") with " + std::to_string(acts.size()) +
          " activation inputs");
    }
    tail.insert(idx);
    t = acts[0];
  }
  // The trunk: every node the pre-final activation depends on.
  std::set<std::string> needed = {site.prefinal};
  std::vector<bool> in_trunk(g.nodes.size(), false);
  for (int i = site.classifier - 1; i >= 0; --i) {
    const Node& n = g.nodes[i];
    bool used = false;
    for (const auto& o : n.outputs) used = used || needed.count(o);
    if (!used) continue;
    in_trunk[i] = true;
    for (const auto& in : ActivationInputs(g, n)) needed.insert(in);
  }
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    if (in_trunk[i]) {
      site.trunk.push_back(i);
    } else if (tail.count(i)) {
      site.tail.push_back(i);
    } else if (i != site.classifier) {
      return InvalidArgument("node '" + g.nodes[i].name + "' (" +
                             g.nodes[i].op +
                             ") feeds neither the classifier nor the output; "
                             "LCP cannot place it in a branch");
    }
  }
  if (site.trunk.empty()) {
    return InvalidArgument("no layers before the classifier '" +
                           g.nodes[site.classifier].name +
                           "' to split into branches");
  }
  return site;
}

}  // namespace shoal
