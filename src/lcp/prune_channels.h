// Structured pruning (the LCP paper's §IV-C, after Anwar et al.): a layer's
// least important output channels, by the L1 norm of their weights, are
// removed together with what reads them in the next layer, so the model
// gets narrower, not sparser, and needs no sparse kernels. Applied to an
// LCP model it prunes each branch on its own, since branches share nothing.
#ifndef SHOAL_LCP_PRUNE_CHANNELS_H_
#define SHOAL_LCP_PRUNE_CHANNELS_H_

#include <string>
#include <vector>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct PruneOptions {
  // The fraction of each prunable layer's output channels removed, in
  // [0, 1); every layer keeps at least one.
  double ratio = 0.5;
};

// One layer whose outputs were pruned.
struct PrunedLayer {
  std::string node;               // the Conv or Gemm whose outputs shrank
  std::string consumer;           // the Conv or Gemm that reads them
  int64_t before = 0, after = 0;  // output channels (features for a Gemm)
};

struct PrunedModel {
  Model model;  // shaped, with its weights
  std::vector<PrunedLayer> layers;
};

// Prunes every layer whose output reaches exactly one next Conv (group 1)
// or Gemm through ops that act on each channel alone (activations, pooling,
// BatchNormalization, Dropout) and at most one Flatten. Other layers keep
// their width: the last layer of a branch (its channels are what the
// classifier reads), one feeding an Add or Concat, a grouped convolution,
// the model's outputs. `m` needs its weights.
StatusOr<PrunedModel> PruneChannels(const Model& m, const PruneOptions& o);

}  // namespace shoal

#endif  // SHOAL_LCP_PRUNE_CHANNELS_H_
