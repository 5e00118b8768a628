// Re-planning: a plan for the devices that serve now, deployed beside the
// current one (or after a drain where the devices cannot hold both), the
// switch, and the old generation's retirement.
#include <algorithm>
#include <mutex>

#include "metrics/http_server.h"
#include "serve/generation.h"
#include "serve/latency_history.h"
#include "serve/membership.h"
#include "serve/monitor.h"
#include "serve/replan.h"
#include "serve/serve_metrics.h"
#include "serve/server_impl.h"
#include "util/clock.h"

namespace shoal {

Status Server::Impl::ReplanLocked(const std::string& kind,
                                  const std::string& reason,
                                  std::vector<DeviceSpec> devs, bool broken,
                                  double measured_ms, bool force) {
  Status s = ReplanOnceLocked(kind, reason, std::move(devs), broken,
                              measured_ms, force);
  if (!s.ok()) {
    metrics.ReplanFailed();
    replans_not_made.Add({{"outcome", "failed"},
                          {"kind", kind},
                          {"reason", reason},
                          {"why", s.message()}});
  }
  return s;
}

Status Server::Impl::ReplanOnceLocked(const std::string& kind,
                                      const std::string& reason,
                                      std::vector<DeviceSpec> devs, bool broken,
                                      double measured_ms, bool force) {
  const auto t0 = Clock::now();
  std::shared_ptr<Generation> cur;
  std::vector<DeviceLoad> loads_before;
  {
    std::lock_guard<std::mutex> lock(mu);
    cur = current;
    loads_before = last_loads;
  }
  if (devs.empty()) {
    return Unavailable("no device of " + DeviceSource() +
                       " answers; the server keeps trying");
  }
  PlanOptions base;
  base.strategy = strategy;
  base.model = opts.model;
  base.objective = opts.objective;
  base.concurrency = opts.concurrency;
  base.ilp_time_limit_s = opts.time_limit_s;
  ASSIGN_OR_RETURN(PlanChoice choice, PlanForDevices(model.graph, base, devs));
  ASSIGN_OR_RETURN(std::vector<double> pred,
                   PredictComputeMs(choice.plan, devs));
  if (cur && !broken) {
    ASSIGN_OR_RETURN(
        ReplanVerdict v,
        JudgeAgainstCurrent(cur->plan(), cur->devices(), choice.plan, pred,
                            devs, force, opts.min_gain));
    if (v.keep_current) {
      replans_not_made.Add({{"outcome", "declined"},
                            {"kind", kind},
                            {"reason", reason},
                            {"why", v.why},
                            {"current_ms", MaxOf(v.current_ms)},
                            {"new_ms", MaxOf(pred)}});
      KeepCurrentLocked(cur, v, MaxOf(pred), reason);
      return Status::Ok();
    }
  }
  SwitchReport report;
  ASSIGN_OR_RETURN(
      std::unique_ptr<Coordinator> coord,
      DeployNextLocked(choice.plan, devs, cur, broken, reason, &report));
  report.deploy_ms = MsSince(t0);
  std::shared_ptr<Generation> old;
  const size_t record =
      SwitchToLocked(std::move(choice), devs, pred, std::move(coord), kind,
                     reason, measured_ms, &old, &report);
  if (old) {
    report.old_devices = old->devices();
    report.old_generation = old->id();
    report.cancelled = broken;
    report.old_requests = RetireLocked(old, broken, reason, report.generation);
    for (const auto& l : loads_before) {
      report.measured_before_ms.push_back(l.measured_ms);
    }
  }
  report.switch_ms = MsSince(t0);
  {
    std::lock_guard<std::mutex> lock(mu);
    replans[record].set_switch_ms(report.switch_ms);
  }
  ServeLogWith(LogLevel::kInfo,
               {{"generation", report.generation},
                {"kind", kind},
                {"reason", reason},
                {"switch_ms", report.switch_ms}},
               "%s", SwitchReportText(report).c_str());
  window.Clear();
  last_replan = Clock::now();
  return Status::Ok();
}

void Server::Impl::KeepCurrentLocked(const std::shared_ptr<Generation>& cur,
                                     const ReplanVerdict& v, double best_new_ms,
                                     const std::string& reason) {
  ServeLogWith(LogLevel::kInfo, {{"reason", reason}, {"why", v.why}},
               "no new plan (%s): %s; the current plan's busiest device is "
               "predicted at %.1f ms per request at the measured speeds, the "
               "best new one at %.1f ms; adopting the measured speeds (%s)",
               reason.c_str(), v.why.c_str(), MaxOf(v.current_ms), best_new_ms,
               SharesLine(cur->devices(), v.current_devices).c_str());
  std::lock_guard<std::mutex> lock(mu);
  cur->devices() = v.current_devices;
  cur->predicted_ms() = v.current_ms;
  window.Clear();
  last_replan = Clock::now();
}

StatusOr<std::unique_ptr<Coordinator>> Server::Impl::DeployNextLocked(
    const Plan& plan, const std::vector<DeviceSpec>& devs,
    const std::shared_ptr<Generation>& cur, bool broken,
    const std::string& reason, SwitchReport* report) {
  Cluster cl;
  cl.devices = devs;
  CoordinatorOptions co;
  co.timeout_ms = opts.timeout_ms;
  co.max_message_bytes = opts.max_message_bytes;
  co.keep_previous = true;
  co.advertise = opts.advertise;
  co.tls = tls;
  ASSIGN_OR_RETURN(auto coord, Coordinator::Create(plan, cl, co));
  DeployReport dep;
  Status st = coord->Deploy(model.weights, &dep);
  if (!st.ok()) {
    coord->Release();  // where it was deployed, the kept plan is current
    // A device over its memory budget with both plans, where the new one
    // alone fits (runtime/worker.cc).
    const bool memory = st.code() == Code::kResourceExhausted;
    if (!cur || broken || !memory) {
      return st.WithContext("deploying the new plan (" + reason + ")");
    }
    ServeLogWith(
        LogLevel::kWarn, {{"generation", cur->id()}},
        "the devices cannot hold both plans (%s); draining generation %lld "
        "first, requests wait",
        st.message().c_str(), static_cast<long long>(cur->id()));
    {
      std::lock_guard<std::mutex> lock(mu);
      paused = true;
    }
    cur->WaitIdle(Clock::now() +
                  std::chrono::milliseconds(opts.timeout_ms + 2000));
    co.keep_previous = false;
    ASSIGN_OR_RETURN(coord, Coordinator::Create(plan, cl, co));
    st = coord->Deploy(model.weights, &dep);
    if (!st.ok()) {
      coord->Release();
      Status back = cur->coord().Deploy(model.weights, nullptr);
      {
        std::lock_guard<std::mutex> lock(mu);
        paused = false;
        cv.notify_all();
      }
      return st.WithContext(
          "deploying the new plan (" + reason + ")" +
          (back.ok() ? "; the previous plan serves again"
                     : "; the previous plan could not be restored: " +
                           back.message()));
    }
    report->drained_first = true;
  }
  report->uploaded_bytes = 0;
  for (int64_t b : dep.uploaded_bytes) report->uploaded_bytes += b;
  return coord;
}

size_t Server::Impl::SwitchToLocked(
    PlanChoice choice, const std::vector<DeviceSpec>& devs,
    const std::vector<double>& pred, std::unique_ptr<Coordinator> coord,
    const std::string& kind, const std::string& reason, double measured_ms,
    std::shared_ptr<Generation>* old, SwitchReport* report) {
  report->strategy = choice.strategy;
  report->note = choice.note;
  report->reason = reason;
  report->devices = devs;
  report->predicted_ms = pred;
  std::lock_guard<std::mutex> lock(mu);
  auto gen = std::make_shared<Generation>(next_generation++, std::move(choice),
                                          devs, pred, std::move(coord));
  *old = current;
  current = gen;
  report->generation = gen->id();
  report->first = *old == nullptr;
  metrics.Replanned(kind);
  // The record's index stays valid until ReplanOnceLocked, the caller,
  // sets its switch time: re-plans run one at a time (monitor_mu).
  const size_t kept = static_cast<size_t>(std::max(1, opts.replans_kept));
  if (replans.size() >= kept) {
    replans.erase(replans.begin(), replans.end() - (kept - 1));
  }
  replans.push_back(
      ReplanRecord(gen->id(), kind, reason, gen->strategy(),
                   *old ? (*old)->devices() : std::vector<DeviceSpec>{}, devs,
                   pred, measured_ms));
  paused = false;
  for (auto& m : members) {
    for (const auto& d : devs) {
      if (d.name == m.spec.name && m.state == Member::kJoining) {
        m.state = Member::kServing;
      }
    }
  }
  last_loads.clear();
  cv.notify_all();
  return replans.size() - 1;
}

int Server::Impl::RetireLocked(const std::shared_ptr<Generation>& old,
                               bool broken, const std::string& reason,
                               int64_t next) {
  const int held = old->InFlight();
  if (broken) {
    old->coord().Cancel(Unavailable(
        "generation " + std::to_string(old->id()) + " lost a device (" +
        reason + "); requests in flight on it are " +
        "retried once on generation " + std::to_string(next)));
  }
  if (!old->WaitIdle(Clock::now() +
                     std::chrono::milliseconds(opts.timeout_ms + 2000))) {
    ServeLogWith(LogLevel::kWarn,
                 {{"generation", old->id()}, {"in_flight", old->InFlight()}},
                 "generation %lld still has %d requests after the deadline",
                 static_cast<long long>(old->id()), old->InFlight());
  }
  old->coord().Release();  // best effort: a dead device is skipped
  return held;
}

}  // namespace shoal
