// Runs a Plan in one process: each device a thread with its own executors,
// transfers copied in memory. The in-process implementation of a device
// cluster, for tests and `shoal run --local`.
#ifndef SHOAL_RUNTIME_LOCAL_RUNNER_H_
#define SHOAL_RUNTIME_LOCAL_RUNNER_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "graph/weights.h"
#include "plan/plan.h"

namespace shoal {

struct LocalRunOptions {
  Backend backend = Backend::kOneDnn;
  int threads_per_device = 1;
};

// What one run moved and spent. Bytes count only transfers between
// different devices: a device reading its own data costs nothing.
struct RunStats {
  int64_t elements_total = 0;
  int64_t bytes_total = 0;
  std::vector<int64_t> bytes_sent;      // per device
  std::vector<int64_t> bytes_received;  // per device
  std::map<std::string, int64_t> elements_per_layer;
  std::vector<double> task_ms;  // compute time of each task
  double latency_ms = 0;
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
  std::vector<std::unique_ptr<Executor>> executors_;  // per task
};

// Counts the plan's communication for one request without running it.
RunStats CountCommunication(const Plan& plan, int64_t request = 0);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_LOCAL_RUNNER_H_
