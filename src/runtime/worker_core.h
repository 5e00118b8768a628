// What the parts of a worker share: a request's identity as it travels
// with each message, and the worker's name, options, counters and the way a
// request fails, which the scheduler and the sender both need.
#ifndef SHOAL_RUNTIME_WORKER_CORE_H_
#define SHOAL_RUNTIME_WORKER_CORE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "metrics/worker_metrics.h"
#include "runtime/worker.h"
#include "runtime/worker_stats.h"

namespace shoal {

class DeploymentSlots;

// A request as a worker knows it: from the first message of it that
// arrives, and passed on with every task and message of it.
struct RequestMeta {
  std::string id;
  int64_t seq = 0;
  std::string reply_to;  // the coordinator's address
  std::chrono::steady_clock::time_point expiry;
};

// WorkerStats behind a lock of its own, so that counting never waits for
// the mailboxes, the send queue or a deployment.
class LockedWorkerStats {
 public:
  template <typename F>
  auto With(F&& f) {
    std::lock_guard<std::mutex> lock(mu_);
    return f(stats_);
  }

 private:
  std::mutex mu_;
  WorkerStats stats_;
};

// Tells the coordinator of a request that it failed here, and forgets it.
using FailRequest =
    std::function<void(const RequestMeta&, WorkerError, const std::string&)>;

struct WorkerCore {
  const WorkerOptions* opts = nullptr;
  WorkerMetrics* metrics = nullptr;
  LockedWorkerStats* stats = nullptr;
  // Spans and task times count for the current deployment only: a
  // draining previous plan's tasks are other tasks.
  const DeploymentSlots* deployments = nullptr;
  FailRequest fail;
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_WORKER_CORE_H_
