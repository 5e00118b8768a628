#include "partition/window_grids.h"

#include "graph/op_registry.h"

namespace shoal {

std::vector<WindowShape> FindWindowGrids(const Graph& g) {
  std::vector<WindowShape> grids;
  for (const auto& n : g.nodes) {
    if (!SplitFactsOf(n.op).relayout || n.inputs.empty() ||
        n.outputs.size() != 1) {
      continue;
    }
    const TensorInfo* in = g.FindTensor(n.inputs[0]);
    const TensorInfo* out = g.FindTensor(n.outputs[0]);
    if (in == nullptr || out == nullptr || in->is_weight()) continue;
    const Shape& x = in->shape;
    const Shape& y = out->shape;
    if (x.size() != 4 || y.size() != 6 || x[0] != 1 || y[0] != 1) continue;
    const int64_t w = y[2];
    if (w < 2 || y[4] != w || y[5] != x[3] || y[1] * w != x[1] ||
        y[3] * w != x[2]) {
      continue;
    }
    bool seen = false;
    for (const auto& s : grids) {
      seen |= s.height == x[1] && s.width == x[2];
    }
    if (!seen) grids.push_back(WindowShape{x[1], x[2], w});
  }
  return grids;
}

}  // namespace shoal
