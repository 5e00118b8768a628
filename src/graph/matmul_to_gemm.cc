#include "graph/matmul_to_gemm.h"

#include <set>

namespace shoal {
namespace {

std::string FreshTensor(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 2; g.tensors.count(name); ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

std::string FreshNode(const std::set<std::string>& taken,
                      const std::string& base) {
  std::string name = base;
  for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

// The Add that adds a constant bias of `cols` values to `y` and is its only
// reader (torch's Linear over tokens: MatMul, then Add), or -1.
int BiasAdd(const Graph& g, const std::string& y, int64_t cols) {
  for (const auto& o : g.outputs)
    if (o == y) return -1;
  const std::vector<int> readers = g.ConsumerIndices(y);
  if (readers.size() != 1) return -1;
  const Node& add = g.nodes[readers[0]];
  if (add.op != "Add" || add.inputs.size() != 2 ||
      add.inputs[0] == add.inputs[1])
    return -1;
  const std::string& b = add.inputs[add.inputs[0] == y ? 1 : 0];
  const TensorInfo* t = g.FindTensor(b);
  if (t == nullptr || !t->is_weight() || t->shape.empty() ||
      t->shape.size() > 2 || t->shape.back() != cols ||
      NumElements(t->shape) != cols)
    return -1;
  // The sum must keep y's shape (no broadcast of y by the bias).
  const TensorInfo* sum = g.FindTensor(add.outputs[0]);
  const TensorInfo* yt = g.FindTensor(y);
  if (sum == nullptr || yt == nullptr || sum->shape != yt->shape) return -1;
  return readers[0];
}

}  // namespace

int MatMulToGemm(Graph* g) {
  std::set<std::string> node_names;
  for (const auto& n : g->nodes) node_names.insert(n.name);
  // Bias Adds taken into their Gemm, by node name.
  std::set<std::string> absorbed;
  for (const auto& n : g->nodes) {
    if (n.op != "MatMul") continue;
    const TensorInfo* w = g->FindTensor(n.inputs[1]);
    if (w == nullptr || !w->is_weight() || w->shape.size() != 2) continue;
    const int add = BiasAdd(*g, n.outputs[0], w->shape[1]);
    if (add >= 0) absorbed.insert(g->nodes[add].name);
  }
  std::vector<Node> out;
  int rewritten = 0;
  for (Node& n : g->nodes) {
    if (absorbed.count(n.name)) continue;
    const TensorInfo* a =
        n.op == "MatMul" ? g->FindTensor(n.inputs[0]) : nullptr;
    const TensorInfo* w = a ? g->FindTensor(n.inputs[1]) : nullptr;
    const bool dense = w != nullptr && w->is_weight() && w->shape.size() == 2 &&
                       !a->is_weight() && a->shaped && a->shape.size() >= 2;
    if (!dense) {
      out.push_back(std::move(n));
      continue;
    }
    const Shape as = a->shape;
    const int64_t k = as.back(), cols = w->shape[1];
    Node gemm{n.name, "Gemm", {n.inputs[0], n.inputs[1]}, n.outputs, {}};
    // A bias added next becomes the Gemm's C: one pass over the output
    // instead of two. The Gemm then writes the Add's output.
    const int add = BiasAdd(*g, n.outputs[0], cols);
    if (add >= 0 && absorbed.count(g->nodes[add].name)) {
      const Node& a_node = g->nodes[add];
      const std::string& bias =
          a_node.inputs[a_node.inputs[0] == n.outputs[0] ? 1 : 0];
      gemm.inputs.push_back(bias);
      g->tensors.erase(n.outputs[0]);
      n.outputs = a_node.outputs;
      gemm.outputs = n.outputs;
    }
    if (as.size() > 2) {
      const int64_t rows = NumElements(as) / k;
      const std::string flat = FreshTensor(*g, n.inputs[0] + "/rows");
      const std::string name = FreshNode(node_names, n.name + "/rows");
      node_names.insert(name);
      Attrs to_rows;
      to_rows.Set("shape", std::vector<int64_t>{rows, k});
      out.push_back(Node{name, "Reshape", {n.inputs[0]}, {flat}, to_rows});
      g->tensors[flat] =
          TensorInfo{flat, {rows, k}, TensorKind::kActivation, true};
      const std::string prod = FreshTensor(*g, n.outputs[0] + "/rows");
      g->tensors[prod] =
          TensorInfo{prod, {rows, cols}, TensorKind::kActivation, true};
      gemm.inputs[0] = flat;
      gemm.outputs = {prod};
      out.push_back(gemm);
      Shape back(as.begin(), as.end() - 1);
      back.push_back(cols);
      const std::string un = FreshNode(node_names, n.name + "/unrows");
      node_names.insert(un);
      Attrs to_back;
      to_back.Set("shape", back);
      out.push_back(Node{un, "Reshape", {prod}, n.outputs, to_back});
    } else {
      out.push_back(gemm);
    }
    ++rewritten;
  }
  g->nodes = std::move(out);
  return rewritten;
}

}  // namespace shoal
