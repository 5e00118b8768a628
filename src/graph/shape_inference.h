// Shape inference over a whole graph, through each op's registered function.
#ifndef SHOAL_GRAPH_SHAPE_INFERENCE_H_
#define SHOAL_GRAPH_SHAPE_INFERENCE_H_

#include "graph/graph.h"
#include "graph/op_registry.h"

namespace shoal {

// Gathers the input shapes of `node` (absent optional inputs marked).
StatusOr<InputShapes> GatherInputShapes(const Graph& g, const Node& node);

// Sorts the graph topologically and assigns every activation its shape.
Status InferShapes(Graph* g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_SHAPE_INFERENCE_H_
