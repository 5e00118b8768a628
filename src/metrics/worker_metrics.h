// The Prometheus series of `shoal worker` (docs/serve.md, "Metrics"). The
// worker's task loop and senders touch only handles resolved at deploy time
// (a counter is an atomic add, a histogram an uncontended lock of its own),
// never the worker's lock; what the worker already holds under its lock
// (queues, memory) is read once per scrape instead.
#ifndef SHOAL_METRICS_WORKER_METRICS_H_
#define SHOAL_METRICS_WORKER_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

namespace shoal {

// What goes wrong on a worker, by kind (the `kind` label of
// shoal_worker_errors_total).
enum class WorkerError {
  kRequestExpired,  // a request's deadline passed here
  kTaskFailed,      // a kernel returned an error
  kSendFailed,      // a peer or the coordinator did not take a tensor
  kMessageRefused,  // a tensor message refused (malformed, over a bound)
  kDeployRefused,   // a deployment refused (memory budget, bad plan)
  kUnauthorized,    // a caller without the certificate an RPC needs
  kInternal,        // an unexpected condition, caught
};
const char* WorkerErrorName(WorkerError e);

// Read under the worker's lock when scraped.
struct WorkerGauges {
  int64_t ready_tasks = 0;          // inputs complete, waiting for compute
  int64_t requests_in_flight = 0;   // requests with an open mailbox here
  int64_t send_queue = 0;           // messages queued or being sent
  int64_t memory_budget_bytes = 0;  // 0: unlimited
  int64_t weight_bytes = 0;         // deployments held (current and draining)
  int64_t activation_bytes = 0;
  int64_t mailbox_bytes = 0;           // inputs of requests in flight
  int64_t tls_handshake_failures = 0;  // in this process, so far
};

class WorkerMetrics {
 public:
  WorkerMetrics();

  // Handles for a deployment to keep: stable until this object goes.
  prometheus::Histogram* TaskSeconds(const std::string& kind);
  prometheus::Counter* BytesSent(const std::string& peer);
  prometheus::Counter* BytesReceived(const std::string& peer);
  prometheus::Counter& busy_seconds() { return *busy_seconds_; }
  // An emulated board's tasks whose host compute took longer than their
  // board time (times the dilation): the emulation fell behind.
  prometheus::Counter& board_overruns() { return *board_overruns_; }

  void Error(WorkerError e) { errors_[static_cast<int>(e)]->Increment(); }
  // A deployment built (not one reused): counts it and makes `plan_id` the
  // one shoal_worker_plan_info shows ("" after a release leaves none).
  void Deployed(const std::string& plan_id, int tasks_here);
  void PlanNow(const std::string& plan_id, int tasks_here);

  // The exposition text with the gauges set to `g`.
  std::string Scrape(const WorkerGauges& g);

  prometheus::Registry& registry() { return *registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Histogram>* task_seconds_;
  prometheus::Family<prometheus::Counter>* sent_;
  prometheus::Family<prometheus::Counter>* received_;
  prometheus::Counter* busy_seconds_;
  prometheus::Counter* board_overruns_;
  prometheus::Counter* errors_[7];
  prometheus::Counter* deployments_;
  prometheus::Counter* handshakes_;
  prometheus::Family<prometheus::Gauge>* plan_info_;
  prometheus::Gauge* plan_info_now_ = nullptr;
  prometheus::Gauge* ready_;
  prometheus::Gauge* requests_;
  prometheus::Gauge* send_queue_;
  prometheus::Gauge* budget_;
  prometheus::Family<prometheus::Gauge>* in_use_;
  prometheus::Gauge* weights_;
  prometheus::Gauge* activations_;
  prometheus::Gauge* mailboxes_;
  std::mutex mu_;  // plan_info_now_; Scrape's gauge writes
};

}  // namespace shoal

#endif  // SHOAL_METRICS_WORKER_METRICS_H_
