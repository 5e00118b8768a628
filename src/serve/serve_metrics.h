// The Prometheus series of `shoal serve` (docs/serve.md, "Metrics"):
// requests by outcome and their latency, in flight, re-plans by kind, and
// per device what the monitor last measured. Request counters are atomics
// bumped by the Inference service; the per-device gauges are set from the
// server's status at each scrape, so that they show exactly what
// `infer-remote --status` and the dashboard show.
#ifndef SHOAL_SERVE_SERVE_METRICS_H_
#define SHOAL_SERVE_SERVE_METRICS_H_

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "shoal.pb.h"
#include "util/status.h"

namespace shoal {

// The `outcome` label of shoal_serve_requests_total for a request that
// ended with `s`: answered, invalid_input, deadline_exceeded, unavailable,
// failed.
const char* RequestOutcome(const Status& s);

class ServeMetrics {
 public:
  ServeMetrics();

  // One Infer call: Start when it arrives, End with its result and time.
  void RequestStarted() { in_flight_->Increment(); }
  void RequestEnded(const Status& s, double seconds);
  void Retried() { retried_->Increment(); }
  // A new plan generation (kind: rpc::Replan.kind) or a re-plan that failed.
  void Replanned(const std::string& kind);
  void ReplanFailed() { replan_failures_->Increment(); }

  // The exposition text, the per-device gauges set from `status`.
  std::string Scrape(const rpc::ServeStatusReply& status);

  // The latency histogram of answered requests: (upper bound in seconds,
  // cumulative count), the last bound +Inf; for the dashboard.
  std::vector<std::pair<double, uint64_t>> LatencyBuckets() const;

 private:
  struct DeviceSeries {
    prometheus::Gauge *up, *share, *predicted, *measured, *utilisation, *queue;
  };

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Histogram* latency_;
  prometheus::Family<prometheus::Counter>* requests_;
  std::map<std::string, prometheus::Counter*> by_outcome_;
  prometheus::Gauge* in_flight_;
  prometheus::Counter* retried_;
  prometheus::Family<prometheus::Counter>* replans_;
  prometheus::Counter* replan_failures_;
  prometheus::Gauge* generation_;
  prometheus::Family<prometheus::Gauge>* up_;
  prometheus::Family<prometheus::Gauge>* share_;
  prometheus::Family<prometheus::Gauge>* predicted_;
  prometheus::Family<prometheus::Gauge>* measured_;
  prometheus::Family<prometheus::Gauge>* utilisation_;
  prometheus::Family<prometheus::Gauge>* queue_;
  std::mutex mu_;  // devices_, and Scrape as a whole
  std::map<std::string, DeviceSeries> devices_;
};

}  // namespace shoal

#endif  // SHOAL_SERVE_SERVE_METRICS_H_
