#include "engine/node_kernels.h"

#include "graph/cost.h"

namespace shoal {

StatusOr<std::vector<NodeKernel>> KernelsOfNodes(const Graph& g,
                                                 const Executor& ex) {
  // A step is labelled with its node's name, "name+Act" when an activation
  // was fused into it, or "reorder <tensor>" (no node's).
  std::map<std::string, size_t> step_of;
  const auto& labels = ex.step_labels();
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i].rfind("reorder ", 0) == 0) continue;
    std::string node = labels[i];
    if (g.FindNode(node) == nullptr && node.find('+') != std::string::npos)
      node = node.substr(0, node.rfind('+'));
    step_of.emplace(node, i);  // the first step of a node names its kernel
  }
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(g));
  std::vector<NodeKernel> out;
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    NodeKernel k;
    k.node = g.nodes[n].name;
    k.op = g.nodes[n].op;
    k.macs = cost.nodes[n].macs;
    auto it = step_of.find(k.node);
    if (it != step_of.end()) {
      k.kernel = ex.step_kernels()[it->second];
      k.impl = ex.step_impls()[it->second];
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::map<std::string, int64_t> MacsByKernel(
    const std::vector<NodeKernel>& nodes) {
  std::map<std::string, int64_t> by;
  for (const auto& n : nodes) {
    if (n.macs == 0) continue;
    std::string key = n.kernel.empty() ? "none" : n.kernel;
    if (n.kernel == "onednn") key += " " + n.impl;
    by[key] += n.macs;
  }
  return by;
}

}  // namespace shoal
