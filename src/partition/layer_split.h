// One device's part of a split conv or fc layer: the node it runs, the weight
// slices it reads, and which region of the layer's input and output it
// touches. Output splitting (LOP, channel) keeps whole input and a slice of
// the filters; input splitting (LIP, filter) a slice of the input channels
// or features and yields partial sums of the whole output.
#ifndef SHOAL_PARTITION_LAYER_SPLIT_H_
#define SHOAL_PARTITION_LAYER_SPLIT_H_

#include <vector>

#include "graph/graph.h"
#include "plan/plan.h"

namespace shoal {

struct LayerPart {
  Node node;
  std::vector<WeightSlice> weights;
  Region in_region;   // of the layer's full input
  Region out_region;  // of the layer's full output (full for partial sums)
  bool partial = false;
};

// Why `n` cannot be split by output or input, or OK.
Status CheckSplittable(const Graph& g, const Node& n);

// A fully connected layer that can be split: rows of features times a
// weight (a Gemm), not a convolution over a feature map.
bool IsFcLayer(const Graph& g, const Node& n);

// Output channels (conv) or features (fc): what output splitting divides.
int64_t OutputSplitSize(const Graph& g, const Node& n);
// Input channels or features: what input splitting divides.
int64_t InputSplitSize(const Graph& g, const Node& n);

StatusOr<LayerPart> SplitOutput(const Graph& g, const Node& n, int64_t begin,
                                int64_t end);
// `with_bias`: exactly one part of an input split adds the bias.
StatusOr<LayerPart> SplitInput(const Graph& g, const Node& n, int64_t begin,
                               int64_t end, bool with_bias);

}  // namespace shoal

#endif  // SHOAL_PARTITION_LAYER_SPLIT_H_
