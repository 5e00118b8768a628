#include "graph/sparsity.h"

#include <algorithm>

#include "graph/op_registry.h"

namespace shoal {

namespace {

// The tensor's sparsity: 0 not sparse, 1 a ReLU's output, 2 one pooled.
int SparsityOf(const Graph& g, const std::string& tensor) {
  std::string at = tensor;
  bool pooled = false;
  // At most one step per node: a malformed graph may hold a cycle.
  for (size_t step = 0; step <= g.nodes.size(); ++step) {
    const Node* producer = nullptr;
    for (const Node& n : g.nodes) {
      if (std::find(n.outputs.begin(), n.outputs.end(), at) !=
          n.outputs.end()) {
        producer = &n;
        break;
      }
    }
    if (producer == nullptr) return false;
    const OpSchema* op = OpRegistry::Global().Find(producer->op);
    if (op == nullptr) return false;
    if (op->sparse_output()) return pooled ? 2 : 1;
    if (!op->keeps_sparsity() || producer->inputs.empty()) return 0;
    pooled |= SplitFactsOf(producer->op).spatial_halo;
    at = producer->inputs[0];
  }
  return 0;
}

}  // namespace

bool IsSparseTensor(const Graph& g, const std::string& tensor) {
  return SparsityOf(g, tensor) > 0;
}

bool IsPooledSparseTensor(const Graph& g, const std::string& tensor) {
  return SparsityOf(g, tensor) == 2;
}

}  // namespace shoal
