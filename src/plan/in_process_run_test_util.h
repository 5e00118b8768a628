// Test helper: a plan run in this process, and its model run whole on one
// device, for the tests of stages below runtime and engine (partition's
// strategy tests, the planner's) that check a plan by running it. Those
// stages do not build on the runners, so the runners come through this
// hook, which runtime/in_process_run_test.cc (the fast test binary) and
// runtime/in_process_run_slowtest.cc (the slow one) fill in before main().
#ifndef SHOAL_PLAN_IN_PROCESS_RUN_TEST_UTIL_H_
#define SHOAL_PLAN_IN_PROCESS_RUN_TEST_UTIL_H_

#include <functional>

#include "graph/weights.h"
#include "plan/plan.h"
#include "plan/run_stats.h"
#include "util/status.h"

namespace shoal::testing {

struct InProcessRunners {
  // runtime's LocalRunner: `p` on `weights` for input `in`.
  std::function<Status(const Plan& p, const WeightStore& weights,
                       const Tensor& in, Tensor* out, RunStats* stats)>
      run_plan;
  // engine's RunWhole: the first output of `m` for `in`.
  std::function<StatusOr<Tensor>(const Model& m, const Tensor& in)> run_whole;
};

inline InProcessRunners& TheInProcessRunners() {
  static InProcessRunners runners;
  return runners;
}

}  // namespace shoal::testing

#endif  // SHOAL_PLAN_IN_PROCESS_RUN_TEST_UTIL_H_
