#include "graph/weights.h"

namespace shoal {

Status CheckWeights(const Graph& g, const WeightStore& w) {
  for (const auto& [name, t] : g.tensors) {
    if (!t.is_weight()) continue;
    auto it = w.find(name);
    if (it == w.end()) return NotFound("weight '" + name + "' has no data");
    if (it->second.shape != t.shape ||
        it->second.size() != NumElements(t.shape)) {
      return InvalidArgument("weight '" + name + "' has shape " +
                             ShapeToString(it->second.shape) + ", the graph expects " +
                             ShapeToString(t.shape));
    }
  }
  return Status::Ok();
}

}  // namespace shoal
