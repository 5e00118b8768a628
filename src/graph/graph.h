// The graph IR: structure only. Weights live apart (graph/weights.h), so a
// graph can be built, shaped, costed and planned with no weight data at all
// (ncnn's param/model split).
#ifndef SHOAL_GRAPH_GRAPH_H_
#define SHOAL_GRAPH_GRAPH_H_

#include <map>
#include <string>
#include <vector>

#include "graph/attrs.h"
#include "graph/shape.h"
#include "util/status.h"

namespace shoal {

enum class TensorKind { kActivation, kWeight };

// All tensors are f32; int64 "control" inputs of ONNX (Reshape's shape,
// Slice's starts, ...) become attributes on import.
struct TensorInfo {
  std::string name;
  Shape shape;
  TensorKind kind = TensorKind::kActivation;
  bool shaped = false;  // set by shape inference (weights and inputs: always)
  bool is_weight() const { return kind == TensorKind::kWeight; }
};

struct Node {
  std::string name;
  std::string op;
  std::vector<std::string> inputs;  // "" marks an absent optional input
  std::vector<std::string> outputs;
  Attrs attrs;
};

class Graph {
 public:
  std::string name;
  std::vector<Node> nodes;  // topological order (TopoSort keeps it so)
  std::map<std::string, TensorInfo> tensors;
  std::vector<std::string> inputs;   // activation inputs, in order
  std::vector<std::string> outputs;  // in order

  Status AddInput(const std::string& name, const Shape& shape);
  Status AddWeight(const std::string& name, const Shape& shape);
  // Appends a node; its outputs become (unshaped) activation tensors.
  Status AddNode(Node node);

  const TensorInfo* FindTensor(const std::string& name) const;
  TensorInfo* FindTensor(const std::string& name);
  const Node* FindNode(const std::string& name) const;

  // Index of the node producing `tensor`, or -1 (input, weight, unknown).
  int ProducerIndex(const std::string& tensor) const;
  // Indices of nodes reading `tensor`, in order.
  std::vector<int> ConsumerIndices(const std::string& tensor) const;

  // Reorders `nodes` topologically (stable). Fails on a cycle or a read of an
  // undefined tensor.
  Status TopoSort();

  // Weight tensors a node reads, in input order.
  std::vector<std::string> WeightInputs(const Node& n) const;
  // Removes weight tensors no node reads any more.
  void DropUnusedWeights();
};

}  // namespace shoal

#endif  // SHOAL_GRAPH_GRAPH_H_
