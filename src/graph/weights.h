// Weight data, kept apart from the graph structure and bound by tensor name.
#ifndef SHOAL_GRAPH_WEIGHTS_H_
#define SHOAL_GRAPH_WEIGHTS_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/shape.h"

namespace shoal {

struct Tensor {
  Shape shape;
  std::vector<float> data;
  Tensor() = default;
  explicit Tensor(Shape s) : shape(std::move(s)), data(NumElements(shape)) {}
  Tensor(Shape s, std::vector<float> d) : shape(std::move(s)), data(std::move(d)) {}
  int64_t size() const { return static_cast<int64_t>(data.size()); }
};

using WeightStore = std::map<std::string, Tensor>;

// A model: its graph and, when loaded or generated, its weights.
struct Model {
  Graph graph;
  WeightStore weights;  // empty for a structure-only model
  bool has_weights() const { return !weights.empty(); }
};

// Checks that every weight tensor of the graph has data of its shape.
Status CheckWeights(const Graph& g, const WeightStore& w);

}  // namespace shoal

#endif  // SHOAL_GRAPH_WEIGHTS_H_
