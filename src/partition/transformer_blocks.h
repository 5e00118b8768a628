// A transformer's blocks as the heads strategy splits them, found from the
// op registry's facts (never op names): attention — the fc layers that
// project Q, K and V, the two products of activations per head with the
// normalisation between them, and the fc layer that projects the heads'
// output back — and MLPs, an fc layer whose output reaches, through
// elementwise ops only, exactly one other fc layer.
#ifndef SHOAL_PARTITION_TRANSFORMER_BLOCKS_H_
#define SHOAL_PARTITION_TRANSFORMER_BLOCKS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"

namespace shoal {

struct AttentionBlock {
  // The fc layers projecting queries, keys and values; their output
  // columns are `heads` groups of `head_width`.
  std::string q, k, v;
  std::string out;  // the output projection, reading the heads' columns
  int64_t heads = 0;
  int64_t head_width = 0;
  // Where Q, K and V begin in their layers' output columns: 0 each for
  // separate projections; 0, D and 2D for one packing them (torch's
  // nn.MultiheadAttention: one Linear of 3D columns, cut by Slice), whose
  // equal segments are then split alike (LayerChoice::segments).
  int64_t q_begin = 0, k_begin = 0, v_begin = 0;
  // How many of Q, K and V layer `name` computes.
  int64_t SegmentsOf(const std::string& name) const {
    return (q == name) + (k == name) + (v == name);
  }
};

struct MlpBlock {
  std::string up, down;  // split by columns, then by rows
};

// Every attention block of `g`, in node order. A block is recognised when
// the scores' product (batch_product) reads a query and a key each traced
// back to an fc layer through nodes that move or scale them (relayout,
// permutes, elementwise with scalar constants) and at most one crop of its
// columns (crops: a packed projection's segment), the context's product
// reads the normalised scores (non_reduced) and a value traced back the
// same way, and the context reaches one fc layer forward the same way.
std::vector<AttentionBlock> FindAttentionBlocks(const Graph& g);

// Every MLP of `g` whose layers are not in `taken` (the attention blocks'
// projections), in node order: between its layers, elementwise ops and
// reshapes that keep the features the last axis.
std::vector<MlpBlock> FindMlpBlocks(const Graph& g,
                                    const std::vector<std::string>& taken);

}  // namespace shoal

#endif  // SHOAL_PARTITION_TRANSFORMER_BLOCKS_H_
