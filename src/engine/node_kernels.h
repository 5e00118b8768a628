// Which kernel computes each node of a graph in an executor built from it,
// and how the graph's multiply-accumulates divide among the kernels. It is
// what `shoal kernels` prints and what the check under qemu reads: on a
// board the MACs must land in a NEON library, not in reference loops.
#ifndef SHOAL_ENGINE_NODE_KERNELS_H_
#define SHOAL_ENGINE_NODE_KERNELS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct NodeKernel {
  std::string node, op;
  // "xnnpack", "onednn" or "reference"; "" for a node with no step of its
  // own: an alias (Reshape, Identity), an activation fused into its
  // producer, a BatchNormalization folded into its conv.
  std::string kernel;
  // oneDNN's implementation ("jit:avx2", "gemm:ref"); an XNNPACK int8
  // layer's path ("qc8", "f32-sums": engine/xnnpack/int8_layer.h)
  std::string impl;
  int64_t macs = 0;  // graph/cost.h's
};

// Every node of `g` (shaped, the graph `ex` was created from), in graph
// order.
StatusOr<std::vector<NodeKernel>> KernelsOfNodes(const Graph& g,
                                                 const Executor& ex);

// MACs per kernel; a node with MACs but no step of its own counts under
// "none" (it would be a bug: no step computes it). oneDNN's MACs are
// keyed "onednn <impl>", so its reference implementations show by name.
std::map<std::string, int64_t> MacsByKernel(
    const std::vector<NodeKernel>& nodes);

}  // namespace shoal

#endif  // SHOAL_ENGINE_NODE_KERNELS_H_
