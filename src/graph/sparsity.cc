#include "graph/sparsity.h"

#include <algorithm>

#include "graph/op_registry.h"

namespace shoal {

bool IsSparseTensor(const Graph& g, const std::string& tensor) {
  std::string at = tensor;
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
    if (op->sparse_output()) return true;
    if (!op->keeps_sparsity() || producer->inputs.empty()) return false;
    at = producer->inputs[0];
  }
  return false;
}

}  // namespace shoal
