#include "metrics/worker_metrics.h"

#include "metrics/exposition.h"

namespace shoal {

namespace {
constexpr const char* kErrorNames[] = {
    "request_expired", "task_failed",  "send_failed", "message_refused",
    "deploy_refused",  "unauthorized", "internal"};
}  // namespace

const char* WorkerErrorName(WorkerError e) {
  return kErrorNames[static_cast<int>(e)];
}

WorkerMetrics::WorkerMetrics()
    : registry_(std::make_shared<prometheus::Registry>()) {
  auto& r = *registry_;
  task_seconds_ = &prometheus::BuildHistogram()
                       .Name("shoal_worker_task_seconds")
                       .Help(
                           "Compute time of one task run, by the kind of "
                           "its heaviest layer")
                       .Register(r);
  sent_ = &prometheus::BuildCounter()
               .Name("shoal_worker_bytes_sent_total")
               .Help(
                   "Tensor bytes sent to another device (peer) or to the "
                   "coordinator (peer=\"coordinator\")")
               .Register(r);
  received_ = &prometheus::BuildCounter()
                   .Name("shoal_worker_bytes_received_total")
                   .Help(
                       "Tensor bytes received, by the device that produced "
                       "them")
                   .Register(r);
  busy_seconds_ = &prometheus::BuildCounter()
                       .Name("shoal_worker_busy_seconds_total")
                       .Help("Seconds the compute thread spent running tasks")
                       .Register(r)
                       .Add({});
  board_overruns_ =
      &prometheus::BuildCounter()
           .Name("shoal_worker_board_overruns_total")
           .Help(
               "Tasks of an emulated board (--board) whose host compute took "
               "longer than the board's time for them times the dilation: "
               "the host could not keep up, and a larger --dilation is due")
           .Register(r)
           .Add({});
  auto& errors = prometheus::BuildCounter()
                     .Name("shoal_worker_errors_total")
                     .Help("Failures on this worker, by kind")
                     .Register(r);
  for (int i = 0; i < 7; ++i)
    errors_[i] = &errors.Add({{"kind", kErrorNames[i]}});
  handshakes_ = &prometheus::BuildCounter()
                     .Name("shoal_worker_tls_handshake_failures_total")
                     .Help(
                         "TLS handshakes that failed in this process (a "
                         "client without a certificate of the cluster CA, a "
                         "plaintext client, a scanner): logged at most once "
                         "every 10 s, counted here")
                     .Register(r)
                     .Add({});
  deployments_ = &prometheus::BuildCounter()
                      .Name("shoal_worker_deployments_total")
                      .Help(
                          "Plans deployed to this worker (a redeploy of the "
                          "plan held is not counted)")
                      .Register(r)
                      .Add({});
  plan_info_ = &prometheus::BuildGauge()
                    .Name("shoal_worker_plan_info")
                    .Help(
                        "The plan this worker runs (label plan_id), with "
                        "value the number of its tasks here; absent when "
                        "none is deployed")
                    .Register(r);
  ready_ = &prometheus::BuildGauge()
                .Name("shoal_worker_ready_tasks")
                .Help(
                    "Tasks whose inputs are all here, waiting for the "
                    "compute thread")
                .Register(r)
                .Add({});
  requests_ = &prometheus::BuildGauge()
                   .Name("shoal_worker_requests_in_flight")
                   .Help("Requests with inputs waiting in a mailbox here")
                   .Register(r)
                   .Add({});
  send_queue_ = &prometheus::BuildGauge()
                     .Name("shoal_worker_send_queue_messages")
                     .Help("Tensor messages queued or being sent")
                     .Register(r)
                     .Add({});
  budget_ = &prometheus::BuildGauge()
                 .Name("shoal_worker_memory_budget_bytes")
                 .Help("The --memory budget for deployments (0: unlimited)")
                 .Register(r)
                 .Add({});
  in_use_ = &prometheus::BuildGauge()
                 .Name("shoal_worker_memory_in_use_bytes")
                 .Help(
                     "Memory the deployments hold, by part: weights and "
                     "activation arenas of the plans held, inputs of "
                     "requests in flight (mailboxes)")
                 .Register(r);
  weights_ = &in_use_->Add({{"part", "weights"}});
  activations_ = &in_use_->Add({{"part", "activations"}});
  mailboxes_ = &in_use_->Add({{"part", "mailboxes"}});
}

prometheus::Histogram* WorkerMetrics::TaskSeconds(const std::string& kind) {
  return &task_seconds_->Add({{"kind", kind}}, SecondsBuckets());
}

prometheus::Counter* WorkerMetrics::BytesSent(const std::string& peer) {
  return &sent_->Add({{"peer", peer}});
}

prometheus::Counter* WorkerMetrics::BytesReceived(const std::string& peer) {
  return &received_->Add({{"peer", peer}});
}

void WorkerMetrics::Deployed(const std::string& plan_id, int tasks_here) {
  deployments_->Increment();
  PlanNow(plan_id, tasks_here);
}

void WorkerMetrics::PlanNow(const std::string& plan_id, int tasks_here) {
  std::lock_guard<std::mutex> lock(mu_);
  if (plan_info_now_ != nullptr) plan_info_->Remove(plan_info_now_);
  plan_info_now_ = nullptr;
  if (plan_id.empty()) return;
  plan_info_now_ = &plan_info_->Add({{"plan_id", plan_id}});
  plan_info_now_->Set(tasks_here);
}

std::string WorkerMetrics::Scrape(const WorkerGauges& g) {
  std::lock_guard<std::mutex> lock(mu_);
  ready_->Set(static_cast<double>(g.ready_tasks));
  requests_->Set(static_cast<double>(g.requests_in_flight));
  send_queue_->Set(static_cast<double>(g.send_queue));
  budget_->Set(static_cast<double>(g.memory_budget_bytes));
  weights_->Set(static_cast<double>(g.weight_bytes));
  activations_->Set(static_cast<double>(g.activation_bytes));
  mailboxes_->Set(static_cast<double>(g.mailbox_bytes));
  // A process-wide count (runtime/process_setup.h) brought up to date.
  const double handshakes = static_cast<double>(g.tls_handshake_failures);
  if (handshakes > handshakes_->Value())
    handshakes_->Increment(handshakes - handshakes_->Value());
  return ExpositionText(*registry_);
}

}  // namespace shoal
