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

}  // namespace

int MatMulToGemm(Graph* g) {
  std::set<std::string> node_names;
  for (const auto& n : g->nodes) node_names.insert(n.name);
  std::vector<Node> out;
  int rewritten = 0;
  for (Node& n : g->nodes) {
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
