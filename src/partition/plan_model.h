// The model a plan is about, rebuilt from the plan's ModelRef alone: every
// process that makes, runs, checks or serves a plan (coordinator, `run
// --check`, `serve`) loads the same graph and weights from it.
#ifndef SHOAL_PARTITION_PLAN_MODEL_H_
#define SHOAL_PARTITION_PLAN_MODEL_H_

#include "graph/weights.h"
#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

// Plans are made and run on the BN-folded graph of the model; with
// `ref.lcp_branches` the model is split into branches on the fly.
StatusOr<Model> LoadPlanModel(const ModelRef& ref, bool with_weights);

}  // namespace shoal

#endif  // SHOAL_PARTITION_PLAN_MODEL_H_
