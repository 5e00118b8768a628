// What `shoal profile` measures of a model: every layer whole, and the
// split variants the planner may use (the collaborative-execution paper's
// profiling database holds "layers and their splitted versions"): conv and
// fc layers with 1/2, 1/4, 1/8 of their output channels, and conv layers on
// a strip of 1/2 and 1/4 of the rows (with its halo). Each is a one-node
// graph fragment the worker can time on random data.
#ifndef SHOAL_SIM_PROFILE_VARIANTS_H_
#define SHOAL_SIM_PROFILE_VARIANTS_H_

#include <string>
#include <vector>

#include "graph/cost.h"
#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct LayerVariant {
  std::string layer;    // the model node
  std::string variant;  // "whole", "lop 1/4", "rows 1/2"
  Graph fragment;       // shaped, one node
  NodeCost cost;        // of that node: the regression's features
};

// Variants of every node of `g` (shaped, BN folded). Variants identical in
// op, attributes and shapes to an earlier one are left out (VGG's repeated
// convs are measured once).
StatusOr<std::vector<LayerVariant>> ProfileVariants(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_SIM_PROFILE_VARIANTS_H_
