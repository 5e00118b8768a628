// How far a tensor is from a reference, by the measure of shoal's invariant
// (DESIGN.md: every exact plan equals the one-device run within 1e-4
// relative): the largest |got - want| over the largest |want|.
#ifndef SHOAL_GRAPH_TENSOR_DIFF_H_
#define SHOAL_GRAPH_TENSOR_DIFF_H_

#include "graph/weights.h"

namespace shoal {

struct TensorDiff {
  double max_abs = 0;  // largest |got - want|
  double max_rel = 0;  // max_abs / largest |want|; max_abs if want is all 0
};

// Both infinite when the shapes differ or a difference is NaN, so that no
// tolerance accepts an output of the wrong shape or one holding NaN.
TensorDiff DiffTensors(const Tensor& got, const Tensor& want);

// DiffTensors(got, want).max_rel.
double MaxRelDiff(const Tensor& got, const Tensor& want);

}  // namespace shoal

#endif  // SHOAL_GRAPH_TENSOR_DIFF_H_
