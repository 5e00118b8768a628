// Removes Identity and Dropout nodes (Dropout is the identity at
// inference): readers of the output read the input instead. A graph output
// keeps its name: the producer of the input is renamed to write it.
#ifndef SHOAL_ONNX_DROP_IDENTITY_H_
#define SHOAL_ONNX_DROP_IDENTITY_H_

#include "graph/graph.h"

namespace shoal {

// Returns how many nodes were removed. A node is kept only when its output
// is a graph output and its input is a graph input, a weight or another
// graph output (no producer to rename).
int DropIdentityOps(Graph* g);

}  // namespace shoal

#endif  // SHOAL_ONNX_DROP_IDENTITY_H_
