// The monitor: one tick at a time, membership first (a lost, returned or
// new device re-plans), then devices that lost their deployment, then the
// window's statistics and a rebalance when one device is out of balance.
#include <algorithm>
#include <mutex>

#include "metrics/http_server.h"
#include "serve/generation.h"
#include "serve/latency_history.h"
#include "serve/membership.h"
#include "serve/monitor.h"
#include "serve/server_impl.h"
#include "util/clock.h"
#include "util/units.h"

namespace shoal {

std::vector<DeviceSpec> Server::Impl::Candidates() {
  std::vector<DeviceSpec> out;
  for (const auto& m : members) {
    if (m.state != Member::kServing && m.state != Member::kJoining) continue;
    DeviceSpec d = m.spec;
    if (current) {
      for (const auto& c : current->devices()) {
        if (c.name == d.name) d.speed = c.speed;
      }
    }
    out.push_back(d);
  }
  return out;
}

void Server::Impl::TickLocked() {
  bool broken = false;
  const std::vector<std::string> events = WatchMembersLocked(&broken);
  std::shared_ptr<Generation> cur;
  {
    std::lock_guard<std::mutex> lock(mu);
    cur = current;
  }
  if (StaleLocked(cur, broken)) {
    ReplanMembershipLocked(cur, broken, events);
    return;
  }
  if (RedeployLostLocked(cur)) return;
  auto stats = cur->coord().Stats(/*reset=*/true);
  if (!stats.ok()) {
    ServeLogWith(
        LogLevel::kWarn,
        {{"generation", cur->id()}, {"error", stats.status().message()}},
        "statistics of generation %lld: %s", static_cast<long long>(cur->id()),
        stats.status().message().c_str());
    return;
  }
  window.Add(*stats);
  std::vector<std::string> names;
  for (const auto& d : cur->devices()) names.push_back(d.name);
  std::vector<DeviceLoad> loads;
  {
    std::lock_guard<std::mutex> lock(mu);
    loads = window.Loads(cur->plan(), cur->predicted_ms());
    last_loads = loads;
  }
  Summarize(cur, loads, names);
  if (!opts.rebalance || MsSince(last_replan) < opts.cooldown_s * 1e3) return;
  RebalanceLocked(cur, loads, names);
}

std::vector<std::string> Server::Impl::WatchMembersLocked(bool* broken) {
  std::vector<std::string> events;
  const bool watch_due =
      opts.watch_s > 0 && MsSince(last_reload) >= opts.watch_s * 1e3;
  bool found_fresh = false;
  const std::vector<DeviceSpec> found_now = opts.discover_s > 0
                                                ? FoundWorkers(&found_fresh)
                                                : std::vector<DeviceSpec>{};
  if (reload_requested.exchange(false) || watch_due || found_fresh) {
    last_reload = Clock::now();
    std::vector<std::string> log;
    if (opts.cluster_file.empty()) {
      ApplyMembers(found_now, "DNS-SD", tls, &members, mu, &events, &log);
    } else {
      ReloadMembers(opts.cluster_file,
                    opts.discover_s > 0 ? &found_now : nullptr, tls, &members,
                    mu, &events, &log);
    }
    // A file that cannot be read keeps the devices as they are: a person
    // should fix it; a device listed anew is news.
    for (const auto& line : log) {
      ServeLog(
          line.rfind("cannot ", 0) == 0 ? LogLevel::kWarn : LogLevel::kInfo,
          "%s", line.c_str());
    }
  }
  *broken = CheckMembers(&members, mu, &events);
  return events;
}

bool Server::Impl::StaleLocked(const std::shared_ptr<Generation>& cur,
                               bool broken) const {
  bool stale = !cur || broken;
  for (const auto& m : members) {
    bool in_plan = false;
    if (cur) {
      for (const auto& d : cur->devices()) in_plan |= d.name == m.spec.name;
    }
    if (m.state == Member::kJoining) stale = true;
    if (in_plan && m.state != Member::kServing) stale = true;
  }
  return stale;
}

void Server::Impl::ReplanMembershipLocked(
    const std::shared_ptr<Generation>& cur, bool broken,
    const std::vector<std::string>& events) {
  const bool urgent = broken || !cur || !events.empty();
  if (!urgent && MsSince(last_failure) < opts.cooldown_s * 1e3) return;
  std::string why;
  for (const auto& e : events) why += (why.empty() ? "" : "; ") + e;
  if (why.empty()) why = cur ? "the devices changed" : "no plan deployed";
  bool joined = false;
  for (const auto& m : members) joined |= m.state == Member::kJoining;
  const char* kind = broken   ? "device_lost"
                     : joined ? "device_joined"
                              : "membership";
  Status s = ReplanLocked(kind, why, Candidates(), broken || !cur, 0, false);
  if (!s.ok()) {
    last_failure = Clock::now();
    ServeLogWith(LogLevel::kWarn, {{"reason", why}, {"error", s.message()}},
                 "re-plan failed: %s", s.message().c_str());
  }
}

void Server::Impl::RebalanceLocked(const std::shared_ptr<Generation>& cur,
                                   const std::vector<DeviceLoad>& loads,
                                   const std::vector<std::string>& names) {
  const Imbalance imb =
      FindImbalance(loads, names, opts.imbalance, opts.min_samples);
  if (!imb.found) return;
  // A device whose speed depends on its load (a CPU quota lets short
  // tasks burst) looks fast once work moved off it and slow once it came
  // back: a re-plan that reverses the last one for the same device waits
  // for four cooldowns, so the plans do not flip back and forth.
  const int direction = imb.ratio > 1 ? -1 : 1;  // its share goes down/up
  const std::string& who = names[imb.device];
  auto last = last_move.find(who);
  if (last != last_move.end() && last->second.first == -direction &&
      MsSince(last->second.second) < 4 * opts.cooldown_s * 1e3) {
    if (MsSince(last_reversal_note) > opts.log_every_s * 1e3) {
      last_reversal_note = Clock::now();
      ServeLog(LogLevel::kInfo,
               "not re-planning yet (%s): it would undo the re-plan for %s of "
               "%.1f s ago; waiting %.0f s in all",
               imb.why.c_str(), who.c_str(), MsSince(last->second.second) / 1e3,
               4 * opts.cooldown_s);
    }
    return;
  }
  std::vector<double> assumed;
  for (const auto& d : cur->devices()) assumed.push_back(d.speed);
  const std::vector<double> speeds =
      MeasuredSpeeds(loads, assumed, opts.min_samples);
  std::vector<DeviceSpec> devs = cur->devices();
  double measured = 0;
  for (size_t d = 0; d < devs.size(); ++d) {
    devs[d].speed = speeds[d];
    measured = std::max(measured, loads[d].measured_ms);
  }
  const int64_t before = next_generation;
  Status s = ReplanLocked("imbalance", imb.why, devs, false, measured, false);
  if (!s.ok()) {
    ServeLogWith(LogLevel::kWarn, {{"reason", imb.why}, {"error", s.message()}},
                 "re-plan failed: %s", s.message().c_str());
  }
  if (next_generation != before) {
    last_move[who] = {direction, Clock::now()};
  }
}

void Server::Impl::Summarize(const std::shared_ptr<Generation>& cur,
                             const std::vector<DeviceLoad>& loads,
                             const std::vector<std::string>& names) {
  const double since = MsSince(last_summary);
  if (since < opts.log_every_s * 1e3) return;
  last_summary = Clock::now();
  std::vector<double> lat;
  {
    std::lock_guard<std::mutex> lock(mu);
    lat.swap(latencies);
    last_p50 = Median(lat);
  }
  std::string per;
  for (size_t d = 0; d < loads.size(); ++d) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "%s%s %.1f/%.1f ms q%.1f",
                  per.empty() ? "" : ", ", names[d].c_str(),
                  loads[d].measured_ms, loads[d].predicted_ms,
                  loads[d].queue_mean);
    per += buf;
  }
  char answered[96];
  if (lat.empty()) {
    std::snprintf(answered, sizeof(answered), "none answered in %.1f s",
                  since / 1e3);
  } else {
    std::snprintf(answered, sizeof(answered),
                  "%zu answered in %.1f s, median %s", lat.size(), since / 1e3,
                  HumanMs(Median(lat)).c_str());
  }
  nlohmann::json fields = {{"generation", cur->id()},
                           {"strategy", cur->strategy()},
                           {"answered", lat.size()},
                           {"window_s", since / 1e3}};
  if (!lat.empty()) fields["median_ms"] = Median(lat);
  ServeLogWith(
      LogLevel::kInfo, fields,
      "generation %lld (%s): %s; compute per request measured/predicted: "
      "%s",
      static_cast<long long>(cur->id()), cur->strategy().c_str(), answered,
      per.c_str());
}

bool Server::Impl::RedeployLostLocked(const std::shared_ptr<Generation>& cur) {
  const std::vector<std::string>& ids = cur->coord().deployment_ids();
  const std::vector<DeviceSpec>& devs = cur->devices();
  std::vector<int> lost;
  std::string names;
  for (size_t d = 0; d < devs.size() && d < ids.size(); ++d) {
    for (const auto& m : members) {
      if (m.spec.name != devs[d].name || m.state != Member::kServing ||
          m.deployment == ids[d]) {
        continue;
      }
      lost.push_back(static_cast<int>(d));
      names += (names.empty() ? "" : ", ") + m.spec.name + " (" +
               m.spec.address + ", " +
               (m.deployment.empty() ? "holds no deployment"
                                     : "holds another deployment") +
               ")";
    }
  }
  if (lost.empty()) return false;
  const auto t0 = Clock::now();
  Status s = cur->coord().Redeploy(model.weights, lost);
  if (s.ok()) {
    ServeLogWith(
        LogLevel::kWarn, {{"devices", names}, {"generation", cur->id()}},
        "device(s) %s lost generation %lld's deployment (restarted, or "
        "another plan was deployed there): redeployed in %.0f ms",
        names.c_str(), static_cast<long long>(cur->id()), MsSince(t0));
    return true;
  }
  ServeLogWith(
      LogLevel::kWarn,
      {{"devices", names}, {"generation", cur->id()}, {"error", s.message()}},
      "device(s) %s lost generation %lld's deployment and redeploying "
      "failed (%s): re-planning",
      names.c_str(), static_cast<long long>(cur->id()), s.message().c_str());
  s = ReplanLocked("device_lost", "redeploying to " + names + " failed",
                   Candidates(),
                   /*broken=*/true, 0, false);
  if (!s.ok()) {
    last_failure = Clock::now();
    ServeLogWith(LogLevel::kWarn, {{"error", s.message()}},
                 "re-plan failed: %s", s.message().c_str());
  }
  return true;
}

void Server::Impl::OnRequestFailure(const std::shared_ptr<Generation>& g) {
  std::lock_guard<std::mutex> lock(monitor_mu);
  {
    std::lock_guard<std::mutex> l(mu);
    if (current != g || stopping) return;
  }
  TickLocked();
}

void Server::Impl::MonitorLoop() {
  const auto interval =
      std::chrono::milliseconds(int64_t(opts.monitor_interval_s * 1e3));
  while (true) {
    {
      std::unique_lock<std::mutex> lock(stop_mu);
      if (stop_cv.wait_for(lock, interval, [&] { return monitor_stop; })) {
        return;
      }
    }
    std::lock_guard<std::mutex> lock(monitor_mu);
    // One failed tick is logged and the next one tried: a monitor
    // thread that ended would leave serve never rebalancing again.
    try {
      TickLocked();
    } catch (const std::exception& e) {
      ServeLogWith(LogLevel::kError, {{"error", e.what()}},
                   "monitor tick failed on an unexpected condition: %s",
                   e.what());
    }
  }
}

}  // namespace shoal
