#include "onnx/drop_identity.h"

#include <algorithm>

namespace shoal {
namespace {

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

// Every read of `from` (node inputs) now reads `to`.
void RenameReads(Graph* g, const std::string& from, const std::string& to) {
  for (auto& n : g->nodes)
    for (auto& in : n.inputs)
      if (in == from) in = to;
}

}  // namespace

int DropIdentityOps(Graph* g) {
  int removed = 0;
  for (size_t i = 0; i < g->nodes.size();) {
    const Node& n = g->nodes[i];
    const bool identity = (n.op == "Identity" || n.op == "Dropout") &&
                          n.inputs.size() == 1 && n.outputs.size() == 1;
    if (!identity) {
      ++i;
      continue;
    }
    const std::string x = n.inputs[0], y = n.outputs[0];
    if (Contains(g->outputs, y)) {
      const int producer = g->ProducerIndex(x);
      if (producer < 0 || Contains(g->outputs, x)) {
        ++i;  // nothing to rename: keep the node
        continue;
      }
      // The producer writes `y` directly; readers of `x` read `y`.
      TensorInfo info = g->tensors.at(x);
      info.name = y;
      g->tensors[y] = info;
      g->tensors.erase(x);
      for (auto& o : g->nodes[producer].outputs)
        if (o == x) o = y;
      RenameReads(g, x, y);
    } else {
      RenameReads(g, y, x);
      g->tensors.erase(y);
    }
    g->nodes.erase(g->nodes.begin() + static_cast<long>(i));
    ++removed;
  }
  return removed;
}

}  // namespace shoal
