// Exact cost accounting of a graph: per node and in total.
#ifndef SHOAL_GRAPH_COST_H_
#define SHOAL_GRAPH_COST_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/op_registry.h"

namespace shoal {

// Every tensor is f32 in memory, but for int8 weights where they are stored.
constexpr int64_t kBytesPerElement = 4;

struct NodeCost {
  std::string name;
  std::string op;
  int64_t params = 0;           // learned weights (BN statistics excluded)
  int64_t weight_elements = 0;  // every stored weight element
  // Of those, the int8 ones (a DequantizeLinear's), a byte each.
  int64_t int8_weight_elements = 0;
  int64_t macs = 0;                   // conv / fc / matmul multiply-accumulates
  GemmShape gemm;                     // the MACs as matrix products (OpWork)
  MacKind mac_kind = MacKind::kGemm;  // the kernel they run on (OpWork)
  int64_t input_elements = 0;         // activation inputs
  int64_t output_elements = 0;
  int64_t weight_bytes() const {
    return (weight_elements - int8_weight_elements) * kBytesPerElement +
           int8_weight_elements;
  }
  int64_t input_bytes() const { return input_elements * kBytesPerElement; }
  int64_t output_bytes() const { return output_elements * kBytesPerElement; }
};

struct GraphCost {
  std::vector<NodeCost> nodes;  // in graph order
  int64_t params = 0;
  int64_t weight_elements = 0;
  int64_t int8_weight_elements = 0;  // read by a DequantizeLinear
  int64_t macs = 0;
  int64_t peak_activation_bytes = 0;
  int64_t weight_bytes() const {
    return (weight_elements - int8_weight_elements) * kBytesPerElement +
           int8_weight_elements;
  }
};

// Requires a shaped graph (InferShapes).
StatusOr<NodeCost> ComputeNodeCost(const Graph& g, const Node& node);
StatusOr<GraphCost> ComputeGraphCost(const Graph& g);

// Peak bytes of live activations when running nodes in graph order, each
// output in its own buffer, each buffer freed after its last reader. Graph
// inputs are live from the start; graph outputs to the end.
int64_t PeakActivationBytes(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_COST_H_
