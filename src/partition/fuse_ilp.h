// The fully-distributed paper's ILP for the partitioning and fusing decision
// (§4.3, eqs. 10-13), solved with GLPK. Per layer one binary per allowed
// scheme (o, i, f, s and optionally w for whole), exactly one chosen (11),
// fuse2 exactly after fuse1 (12), no fuse1 on the last layer (13) or on a
// layer not fusable with the next. The paper's o_{l-1} reuse term is a
// product of two binaries; it is linearised with y_l <= o_{l-1},
// y_l <= o_l + f_l and the objective term -reuse_l * y_l (minimising pushes
// y_l to 1 exactly when both hold).
#ifndef SHOAL_PARTITION_FUSE_ILP_H_
#define SHOAL_PARTITION_FUSE_ILP_H_

#include <vector>

#include "partition/chain.h"
#include "partition/fuse_choice.h"
#include "util/status.h"

namespace shoal {

// The schemes minimising C. Stops after options.time_limit_s with the best
// solution found so far (proven_optimal false), or an error if none.
StatusOr<FuseChoice> SolveFuseIlp(const std::vector<ChainLayer>& chain,
                                  const std::vector<double>& shares,
                                  const FuseOptions& options = {});

}  // namespace shoal

#endif  // SHOAL_PARTITION_FUSE_ILP_H_
