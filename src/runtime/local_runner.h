// Runs a Plan in one process: each device with its own executors, its
// tasks run one at a time as a worker runs them (the plan's dataflow,
// plan/dataflow.h), transfers copied in memory. The devices share a bounded
// pool of threads, a task running when its inputs are in, so a plan of
// thousands of devices needs no thread each. The in-process implementation
// of a device cluster, for tests and `shoal run --local`.
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
  // Devices computing at once, at most; 0: LocalPoolThreads's default.
  int max_threads = 0;
};

// Twice the host's cores, at least 4: devices beyond that would only take
// turns on the same cores, each thread holding a stack.
constexpr int kLocalThreadsPerCore = 2;
constexpr int kMinLocalThreads = 4;

// The pool's size for `opts`, before capping it at the plan's devices.
size_t LocalPoolThreads(const LocalRunOptions& opts);

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
