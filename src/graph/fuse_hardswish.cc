#include "graph/fuse_hardswish.h"

#include <cmath>

namespace shoal {
namespace {

bool IsHardSwishGate(const Node& n) {
  return n.op == "HardSigmoid" && n.inputs.size() == 1 &&
         n.outputs.size() == 1 &&
         std::fabs(n.attrs.GetFloat("alpha", 0.2f) - 1.f / 6) < 1e-6f &&
         std::fabs(n.attrs.GetFloat("beta", 0.5f) - 0.5f) < 1e-6f;
}

int Readers(const Graph& g, const std::string& tensor) {
  int k = 0;
  for (const auto& n : g.nodes)
    for (const auto& in : n.inputs) k += in == tensor;
  for (const auto& o : g.outputs) k += o == tensor;
  return k;
}

}  // namespace

int FuseHardSwish(Graph* g) {
  int rewritten = 0;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    Node& mul = g->nodes[i];
    if (mul.op != "Mul" || mul.inputs.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const std::string gate = mul.inputs[side], x = mul.inputs[1 - side];
      const int h = g->ProducerIndex(gate);
      if (h < 0 || !IsHardSwishGate(g->nodes[h]) ||
          g->nodes[h].inputs[0] != x || Readers(*g, gate) != 1) {
        continue;
      }
      mul.op = "HardSwish";
      mul.inputs = {x};
      mul.attrs = Attrs();
      g->nodes.erase(g->nodes.begin() + h);
      g->tensors.erase(gate);
      if (static_cast<size_t>(h) < i) --i;
      ++rewritten;
      break;
    }
  }
  return rewritten;
}

}  // namespace shoal
