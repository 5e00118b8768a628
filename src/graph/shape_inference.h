// Shape inference over a whole graph, through each op's registered function.
#ifndef SHOAL_GRAPH_SHAPE_INFERENCE_H_
#define SHOAL_GRAPH_SHAPE_INFERENCE_H_

#include "graph/graph.h"
#include "graph/op_registry.h"

namespace shoal {

// Gathers the input shapes of `node` (absent optional inputs marked).
StatusOr<InputShapes> GatherInputShapes(const Graph& g, const Node& node);

// Infers the output shapes of one node from its inputs' shapes; an output
// with an empty or negative extent is an error naming the node (an input too
// small for the model, e.g. a pool that would shrink 2x2 to 0x0).
Status InferNodeShapes(const Graph& g, const Node& node,
                       std::vector<Shape>* out);

// Sorts the graph topologically and assigns every activation its shape.
Status InferShapes(Graph* g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_SHAPE_INFERENCE_H_
