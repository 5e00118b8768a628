// Runs a Plan in one process: each device a thread with its own executors,
// transfers copied in memory, tasks run as a worker runs them (the plan's
// dataflow, plan/dataflow.h). The in-process implementation of a device
// cluster, for tests and `shoal run --local`.
#ifndef SHOAL_RUNTIME_LOCAL_RUNNER_H_
#define SHOAL_RUNTIME_LOCAL_RUNNER_H_

#include <memory>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "graph/weights.h"
#include "plan/dataflow.h"
#include "plan/plan.h"
#include "plan/run_stats.h"

namespace shoal {

struct LocalRunOptions {
  Backend backend = kDefaultBackend;
  int threads_per_device = 1;
};

class LocalRunner {
 public:
  static StatusOr<std::unique_ptr<LocalRunner>> Create(
      const Plan& plan, const WeightStore& model_weights,
      const LocalRunOptions& opts);
  ~LocalRunner();

  // One inference; `request` picks replicas round robin.
  Status Run(const Tensor& input, Tensor* output, RunStats* stats,
             int64_t request = 0);

 private:
  LocalRunner() = default;
  const Plan* plan_ = nullptr;
  Plan plan_copy_;
  LocalRunOptions opts_;
  PlanFlow flow_;
  std::vector<std::unique_ptr<Executor>> executors_;  // per task
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_LOCAL_RUNNER_H_
