// Int8 models (QDQ form, graph/insert_qdq.h) are planned as if their
// weights were float: each DequantizeLinear of an int8 weight is folded
// into a float weight named as its output, so that every strategy splits
// the layer exactly as it splits a float one. The plan is then given its
// int8 weights back: each task reads its slice of the int8 tensor and
// dequantizes it with that slice's scales, so a device holds one byte a
// weight value and the engine finds its int8 pattern in every fragment.
#ifndef SHOAL_PARTITION_WEIGHT_DEQUANTIZE_H_
#define SHOAL_PARTITION_WEIGHT_DEQUANTIZE_H_

#include <map>
#include <string>

#include "graph/graph.h"
#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

struct WeightDequantizeFold {
  Graph graph;  // the model with each weight's DQ folded away
  // Folded tensor (the DQ's output) -> the DQ node that made it (its
  // input is the int8 weight).
  std::map<std::string, Node> folded;
  bool empty() const { return folded.empty(); }
};

// Folds every DequantizeLinear whose input is a weight of `g`. `g` itself
// is returned (with nothing folded) when there is none.
WeightDequantizeFold FoldWeightDequantize(const Graph& g);

// Rewrites the tasks of `plan` (made on fold.graph) to read the int8
// weights of `model` (the unfolded graph): a weight slice of a folded
// tensor becomes the same region of its int8 source, dequantized in the
// fragment by the folded node with the scales of the slice's channels.
Status UnfoldWeightDequantize(const WeightDequantizeFold& fold,
                              const Graph& model, Plan* plan);

}  // namespace shoal

#endif  // SHOAL_PARTITION_WEIGHT_DEQUANTIZE_H_
