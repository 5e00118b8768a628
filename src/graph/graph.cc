#include "graph/graph.h"

#include <algorithm>
#include <queue>
#include <set>
#include <unordered_map>

#include "graph/shape_check.h"

namespace shoal {

Status Graph::AddInput(const std::string& n, const Shape& shape) {
  if (tensors.count(n))
    return InvalidArgument("tensor '" + n + "' defined twice");
  RETURN_IF_ERROR(CheckShape(shape, "input '" + n + "'"));
  tensors[n] = TensorInfo{n, shape, TensorKind::kActivation, true};
  inputs.push_back(n);
  return Status::Ok();
}

Status Graph::AddWeight(const std::string& n, const Shape& shape) {
  if (tensors.count(n))
    return InvalidArgument("tensor '" + n + "' defined twice");
  RETURN_IF_ERROR(CheckShape(shape, "weight '" + n + "'"));
  tensors[n] = TensorInfo{n, shape, TensorKind::kWeight, true};
  return Status::Ok();
}

Status Graph::AddNode(Node node) {
  for (const auto& out : node.outputs) {
    if (out.empty()) continue;
    if (tensors.count(out)) {
      return InvalidArgument("tensor '" + out + "' (output of node '" +
                             node.name + "') defined twice");
    }
    tensors[out] = TensorInfo{out, {}, TensorKind::kActivation, false};
  }
  nodes.push_back(std::move(node));
  return Status::Ok();
}

const TensorInfo* Graph::FindTensor(const std::string& n) const {
  auto it = tensors.find(n);
  return it == tensors.end() ? nullptr : &it->second;
}

TensorInfo* Graph::FindTensor(const std::string& n) {
  auto it = tensors.find(n);
  return it == tensors.end() ? nullptr : &it->second;
}

const Node* Graph::FindNode(const std::string& n) const {
  for (const auto& node : nodes)
    if (node.name == n) return &node;
  return nullptr;
}

int Graph::ProducerIndex(const std::string& tensor) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (o == tensor) return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::ConsumerIndices(const std::string& tensor) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& in : nodes[i].inputs) {
      if (in == tensor) {
        out.push_back(static_cast<int>(i));
        break;
      }
    }
  }
  return out;
}

Status Graph::TopoSort() {
  std::unordered_map<std::string, int> producer;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const auto& o : nodes[i].outputs)
      if (!o.empty()) producer[o] = static_cast<int>(i);

  const size_t n = nodes.size();
  std::vector<int> indegree(n, 0);
  std::vector<std::vector<int>> users(n);
  for (size_t i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : nodes[i].inputs) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it != producer.end()) {
        deps.insert(it->second);
      } else if (!tensors.count(in) || (!tensors.at(in).is_weight() &&
                                        std::find(inputs.begin(), inputs.end(),
                                                  in) == inputs.end())) {
        return InvalidArgument("node '" + nodes[i].name + "' (" + nodes[i].op +
                               ") reads tensor '" + in +
                               "' that nothing defines");
      }
    }
    for (int d : deps) {
      users[d].push_back(static_cast<int>(i));
      ++indegree[i];
    }
  }
  // Stable Kahn: always take the lowest ready index.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push(static_cast<int>(i));
  std::vector<Node> sorted;
  sorted.reserve(n);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    sorted.push_back(std::move(nodes[i]));
    for (int u : users[i])
      if (--indegree[u] == 0) ready.push(u);
  }
  if (sorted.size() != n) {
    return InvalidArgument("graph '" + name + "' has a cycle");
  }
  nodes = std::move(sorted);
  return Status::Ok();
}

std::vector<std::string> Graph::WeightInputs(const Node& node) const {
  std::vector<std::string> out;
  for (const auto& in : node.inputs) {
    const TensorInfo* t = FindTensor(in);
    if (t && t->is_weight()) out.push_back(in);
  }
  return out;
}

void Graph::DropUnusedWeights() {
  std::set<std::string> used;
  for (const auto& node : nodes)
    for (const auto& in : node.inputs) used.insert(in);
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (it->second.is_weight() && !used.count(it->first))
      it = tensors.erase(it);
    else
      ++it;
  }
}

}  // namespace shoal
