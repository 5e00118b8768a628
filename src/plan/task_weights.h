// Binds a task's weight slices to data cut from the model's weights: what a
// coordinator sends a worker at deploy time, and what --local runs with.
#ifndef SHOAL_PLAN_TASK_WEIGHTS_H_
#define SHOAL_PLAN_TASK_WEIGHTS_H_

#include "graph/weights.h"
#include "plan/plan.h"

namespace shoal {

StatusOr<WeightStore> SliceTaskWeights(const Task& task,
                                       const WeightStore& model_weights);

// Bytes slice `w` of `t` takes where it is stored: one a value for an int8
// weight (graph/quantization.h IsInt8Weight), else four.
int64_t SliceBytes(const Task& t, const WeightSlice& w);

// Bytes of weights each device holds under the plan (replicas hold a copy).
std::vector<int64_t> WeightBytesPerDevice(const Plan& p);

}  // namespace shoal

#endif  // SHOAL_PLAN_TASK_WEIGHTS_H_
