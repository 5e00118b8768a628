// Folds BatchNormalization into the Conv before it (inference form):
//   W'[m] = W[m] * s[m],  b'[m] = (b[m] - mean[m]) * s[m] + beta[m],
//   s[m] = gamma[m] / sqrt(var[m] + epsilon).
// This is what torch.onnx.export does in eval mode; models exported without
// it get the same graph and costs after this transform. ONNX import applies
// it on request (--fuse-batchnorm); the oneDNN engine always does, on its
// own copy of the graph.
#ifndef SHOAL_GRAPH_FUSE_BATCHNORM_H_
#define SHOAL_GRAPH_FUSE_BATCHNORM_H_

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// Fuses every BN whose input comes from a Conv that nothing else reads and
// whose parameters are weights. With weights in `m`, recomputes the conv's
// weight and bias (a new bias when it had none; a copy when another node
// shares the weight); without, changes the structure only. Returns the
// number of BN nodes removed.
StatusOr<int> FuseBatchNorm(Model* m);

// Whether FuseBatchNorm would fuse at least one BN of `g`.
bool HasFoldableBatchNorm(const Graph& g);

}  // namespace shoal

#endif  // SHOAL_GRAPH_FUSE_BATCHNORM_H_
