// Test helper: fills plan/in_process_run_test_util.h's hook with runtime's
// LocalRunner and engine's RunWhole. Each test binary includes it once
// (runtime/in_process_run_test.cc, runtime/in_process_run_slowtest.cc).
#ifndef SHOAL_RUNTIME_IN_PROCESS_RUN_TEST_UTIL_H_
#define SHOAL_RUNTIME_IN_PROCESS_RUN_TEST_UTIL_H_

#include "engine/run_whole.h"
#include "plan/in_process_run_test_util.h"
#include "runtime/local_runner.h"

namespace shoal::testing {

inline bool FillInProcessRunners() {
  InProcessRunners& r = TheInProcessRunners();
  r.run_plan = [](const Plan& p, const WeightStore& weights, const Tensor& in,
                  Tensor* out, RunStats* stats) -> Status {
    auto runner = LocalRunner::Create(p, weights, LocalRunOptions{});
    if (!runner.ok()) return runner.status().WithContext("runner");
    return runner.value()->Run(in, out, stats).WithContext("run");
  };
  r.run_whole = [](const Model& m, const Tensor& in) {
    return RunWhole(m, in);
  };
  return true;
}

}  // namespace shoal::testing

#endif  // SHOAL_RUNTIME_IN_PROCESS_RUN_TEST_UTIL_H_
