// The graph verifier: runs after every transform (TVM's well-formed check).
#ifndef SHOAL_GRAPH_VERIFY_H_
#define SHOAL_GRAPH_VERIFY_H_

#include "graph/graph.h"

namespace shoal {

// Checks: unique node names; every tensor read is defined exactly once;
// nodes are in topological order; every op is registered, with known
// attributes; stored shapes equal what shape inference computes; graph
// outputs exist.
Status VerifyGraph(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_VERIFY_H_
