// A model run whole on one device in this process: the reference that every
// exact plan's distributed output must equal (DESIGN.md, the invariant).
#ifndef SHOAL_ENGINE_RUN_WHOLE_H_
#define SHOAL_ENGINE_RUN_WHOLE_H_

#include "engine/executor.h"

namespace shoal {

// The first output of `m` (with weights) for the single input `x`.
StatusOr<Tensor> RunWhole(const Model& m, const Tensor& x,
                          const ExecutorOptions& o = {});

}  // namespace shoal

#endif  // SHOAL_ENGINE_RUN_WHOLE_H_
