#include "serve/serve_metrics.h"

#include <set>

#include "metrics/exposition.h"

namespace shoal {

namespace {

constexpr const char* kOutcomes[] = {
    "answered", "invalid_input", "deadline_exceeded", "unavailable", "failed"};

prometheus::Family<prometheus::Gauge>* DeviceGauge(prometheus::Registry& r,
                                                   const char* name,
                                                   const char* help) {
  return &prometheus::BuildGauge().Name(name).Help(help).Register(r);
}

}  // namespace

const char* RequestOutcome(const Status& s) {
  switch (s.code()) {
    case Code::kOk:
      return "answered";
    case Code::kInvalidArgument:
      return "invalid_input";
    case Code::kDeadlineExceeded:
      return "deadline_exceeded";
    case Code::kUnavailable:
      return "unavailable";
    default:
      return "failed";
  }
}

ServeMetrics::ServeMetrics()
    : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  latency_ = &prometheus::BuildHistogram()
                  .Name("shoal_serve_request_duration_seconds")
                  .Help(
                      "Time from an Infer call's arrival to its answer, "
                      "answered requests only (a retry included)")
                  .Register(r)
                  .Add({}, SecondsBuckets());
  requests_ = &prometheus::BuildCounter()
                   .Name("shoal_serve_requests_total")
                   .Help("Infer calls finished, by outcome")
                   .Register(r);
  for (const char* o : kOutcomes) {
    by_outcome_[o] = &requests_->Add({{"outcome", o}});
  }
  in_flight_ = &prometheus::BuildGauge()
                    .Name("shoal_serve_requests_in_flight")
                    .Help("Infer calls received and not yet answered")
                    .Register(r)
                    .Add({});
  retried_ = &prometheus::BuildCounter()
                  .Name("shoal_serve_requests_retried_total")
                  .Help(
                      "Requests retried once on a newer plan after a "
                      "device failed them")
                  .Register(r)
                  .Add({});
  replans_ = &prometheus::BuildCounter()
                  .Name("shoal_serve_replans_total")
                  .Help("Plan generations deployed, by what caused them")
                  .Register(r);
  replan_failures_ = &prometheus::BuildCounter()
                          .Name("shoal_serve_replan_failures_total")
                          .Help(
                              "Re-plans that could not be deployed (the "
                              "previous plan kept serving)")
                          .Register(r)
                          .Add({});
  generation_ = &prometheus::BuildGauge()
                     .Name("shoal_serve_generation")
                     .Help("The plan generation new requests go to")
                     .Register(r)
                     .Add({});
  up_ = DeviceGauge(r, "shoal_serve_device_up",
                    "1 if the device answers its health checks (serving or "
                    "joining), 0 if it is down");
  share_ = DeviceGauge(r, "shoal_serve_device_share",
                       "Relative speed the current plan assumed for the "
                       "device");
  predicted_ = DeviceGauge(r, "shoal_serve_device_predicted_seconds",
                           "Compute per request the plan predicted for the "
                           "device");
  measured_ = DeviceGauge(r, "shoal_serve_device_measured_seconds",
                          "Compute per request measured on the device over "
                          "the monitoring window (0: not enough runs yet)");
  utilisation_ = DeviceGauge(r, "shoal_serve_device_utilisation_ratio",
                             "Fraction of the monitoring window the device's "
                             "compute thread was busy");
  queue_ = DeviceGauge(r, "shoal_serve_device_queue_mean",
                       "Tasks waiting on the device when one became ready, "
                       "mean over the monitoring window");
}

void ServeMetrics::RequestEnded(const Status& s, double seconds) {
  in_flight_->Decrement();
  by_outcome_.at(RequestOutcome(s))->Increment();
  if (s.ok()) latency_->Observe(seconds);
}

void ServeMetrics::Replanned(const std::string& kind) {
  replans_->Add({{"kind", kind}}).Increment();
}

std::string ServeMetrics::Scrape(const rpc::ServeStatusReply& status) {
  std::lock_guard<std::mutex> lock(mu_);
  generation_->Set(static_cast<double>(status.generation()));
  std::set<std::string> seen;
  for (const auto& d : status.devices()) {
    if (d.state() == "removed" || !seen.insert(d.name()).second) continue;
    auto it = devices_.find(d.name());
    if (it == devices_.end()) {
      const prometheus::Labels l{{"device", d.name()}};
      it = devices_
               .emplace(d.name(),
                        DeviceSeries{&up_->Add(l), &share_->Add(l),
                                     &predicted_->Add(l), &measured_->Add(l),
                                     &utilisation_->Add(l), &queue_->Add(l)})
               .first;
    }
    const DeviceSeries& s = it->second;
    s.up->Set(d.state() == "down" ? 0 : 1);
    s.share->Set(d.share());
    s.predicted->Set(d.predicted_ms() / 1e3);
    s.measured->Set(d.measured_ms() / 1e3);
    s.utilisation->Set(d.utilisation());
    s.queue->Set(d.queue_mean());
  }
  // A device no longer in the cluster file has no series left.
  for (auto it = devices_.begin(); it != devices_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    const DeviceSeries& s = it->second;
    up_->Remove(s.up);
    share_->Remove(s.share);
    predicted_->Remove(s.predicted);
    measured_->Remove(s.measured);
    utilisation_->Remove(s.utilisation);
    queue_->Remove(s.queue);
    it = devices_.erase(it);
  }
  return ExpositionText(*registry_);
}

std::vector<std::pair<double, uint64_t>> ServeMetrics::LatencyBuckets() const {
  std::vector<std::pair<double, uint64_t>> out;
  const auto m = latency_->Collect();
  for (const auto& b : m.histogram.bucket) {
    out.emplace_back(b.upper_bound, b.cumulative_count);
  }
  return out;
}

}  // namespace shoal
