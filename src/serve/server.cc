#include "serve/server.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdarg>
#include <ctime>
#include <mutex>
#include <thread>

#include "metrics/exposition.h"
#include "metrics/http_server.h"
#include "models/zoo.h"
#include "partition/plan_model.h"
#include "plan/plan_json.h"
#include "runtime/peer_auth.h"
#include "runtime/rpc_guard.h"
#include "runtime/wire.h"
#include "serve/classify.h"
#include "serve/dashboard.h"
#include "serve/generation.h"
#include "serve/http_api.h"
#include "serve/latency_history.h"
#include "serve/membership.h"
#include "serve/monitor.h"
#include "serve/replan.h"
#include "serve/serve_metrics.h"
#include "shoal.grpc.pb.h"
#include "util/clock.h"
#include "util/read_file.h"
#include "util/units.h"

namespace shoal {

namespace {

using Clock = std::chrono::steady_clock;

int64_t MsUntil(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now())
      .count();
}

// One line on stderr, time-stamped: the server's log.
void Log(const char* fmt, ...) {
  static std::mutex mu;
  char msg[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                           now.time_since_epoch())
                           .count() %
                       1000);
  std::tm tm;
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
  std::lock_guard<std::mutex> lock(mu);
  std::fprintf(stderr, "[serve %s.%03d] %s\n", stamp, ms, msg);
}

// A failure a second try on a newer plan can fix: a device that cannot be
// reached, aborted the request, lost its deployment, or was full.
bool Retryable(const Status& s) {
  return s.code() == Code::kUnavailable ||
         s.code() == Code::kFailedPrecondition ||
         s.code() == Code::kResourceExhausted;
}

}  // namespace

struct Server::Impl final : public rpc::Inference::Service {
  ServeOptions opts;
  std::string strategy;
  Model model;
  int64_t max_msg = kDefaultMaxMessageBytes;
  std::unique_ptr<grpc::Server> grpc_server;
  int port = 0;
  // The cluster file's TLS identity (docs/security.md): to the workers, to
  // the coordinators' reply endpoints and on the Inference service, where
  // only coordinator certificates may ask. Null: plaintext.
  std::shared_ptr<const TlsIdentity> tls;

  // Generations and counters.
  std::mutex mu;
  std::condition_variable cv;
  std::shared_ptr<Generation> current;
  bool paused = false;  // switching with a drain first: requests wait
  bool stopping = false;
  int64_t next_generation = 1;
  std::vector<rpc::Replan> replans;
  std::vector<double> latencies;  // answered since the last summary
  double last_p50 = 0;
  std::atomic<int64_t> next_seq{0}, accepted{0}, answered{0}, failed{0},
      retried{0};
  std::atomic<int64_t> requests_in_flight{0};  // in ServeRequest now
  // Prometheus series and the dashboard (serve/serve_metrics.h,
  // serve/dashboard.h), each on its own HTTP server when asked for.
  ServeMetrics metrics;
  LatencyHistory history;
  const Clock::time_point started = Clock::now();

  // The monitor: one tick or re-plan at a time.
  std::mutex monitor_mu;
  std::vector<Member> members;  // guarded by monitor_mu (states also by mu)
  LoadWindow window{4};
  std::vector<DeviceLoad> last_loads;  // of the current generation
  Clock::time_point last_replan = Clock::now();
  Clock::time_point last_failure;  // of a re-plan
  // Per device, which way the last re-plan for its speed moved its share
  // (-1 down, +1 up) and when.
  std::map<std::string, std::pair<int, Clock::time_point>> last_move;
  Clock::time_point last_reversal_note;
  Clock::time_point last_reload = Clock::now();
  Clock::time_point last_summary = Clock::now();
  std::atomic<bool> reload_requested{false};
  std::thread monitor;
  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool monitor_stop = false;
  // Last, so destroyed first: their pages read the members above.
  std::unique_ptr<HttpServer> metrics_http, dashboard_http, api_http;
  std::string http_token;  // of --http-token-file; "": none

  // --- The Inference service ------------------------------------------------

  // The current generation with this request counted on it; waits while a
  // switch drains first.
  std::shared_ptr<Generation> Acquire(Clock::time_point expiry, Status* why) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait_until(lock, expiry, [&] { return stopping || !paused; });
    if (stopping) {
      *why = Unavailable("shoal serve is shutting down");
      return nullptr;
    }
    if (paused) {
      *why = Status(Code::kDeadlineExceeded,
                    "the request's deadline passed while the server switched "
                    "plans");
      return nullptr;
    }
    if (!current) {
      *why = Unavailable("no plan is deployed (no device of " +
                         opts.cluster_file + " answers)");
      return nullptr;
    }
    current->Enter();
    return current;
  }

  // The request's input, checked against the model's input shape.
  StatusOr<Tensor> InputOf(const rpc::InferRequest& req) {
    const Shape& want = model.graph.tensors.at(model.graph.inputs[0]).shape;
    Shape shape(req.shape().begin(), req.shape().end());
    if (shape != want) {
      return InvalidArgument("input has shape " + ShapeToString(shape) +
                             " but model " + opts.model.spec + " expects " +
                             ShapeToString(want));
    }
    auto x = TensorFromBytes(shape, req.data());
    if (!x.ok()) return x.status().WithContext("input");
    return x;
  }

  // When the request stops being worth answering: --timeout-ms after it
  // arrived at `t0`, or the client's deadline where that comes first.
  Clock::time_point ExpiryOf(const grpc::ServerContext& ctx,
                             Clock::time_point t0) {
    int64_t budget = opts.timeout_ms;
    const auto client = ctx.deadline();
    if (client < std::chrono::system_clock::now() + std::chrono::hours(24)) {
      budget = std::min<int64_t>(
          budget, std::chrono::duration_cast<std::chrono::milliseconds>(
                      client - std::chrono::system_clock::now())
                      .count());
    }
    return t0 + std::chrono::milliseconds(budget);
  }

  // A request's output and the generation that computed it, held until the
  // reply is written.
  struct Answer {
    std::shared_ptr<Generation> generation;
    Tensor out;
    int attempts = 0;
  };

  // Runs request `seq` on the current plan; a retryable failure checks the
  // devices and tries again, on a newer plan where one was made.
  StatusOr<Answer> RunWithRetries(const Tensor& x, int64_t seq,
                                  Clock::time_point expiry) {
    Status last;
    for (int attempt = 1; attempt <= 3; ++attempt) {
      Status why;
      std::shared_ptr<Generation> g = Acquire(expiry, &why);
      if (!g) return why;
      const int64_t left = MsUntil(expiry);
      if (left <= 0) {
        g->Leave();
        return Status(Code::kDeadlineExceeded,
                      "the request's deadline passed before it ran");
      }
      Tensor out;
      Status s = g->coord().Run(x, &out, nullptr, seq, left);
      g->Leave();
      if (s.ok()) return Answer{std::move(g), std::move(out), attempt};
      last = s.WithContext("generation " + std::to_string(g->id()));
      // A retry that ran on a plan being replaced (the device had not been
      // found gone yet) was cancelled by the switch, which promises a retry
      // on the new plan: a third try, on it, keeps that promise.
      bool superseded = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        superseded = current && current != g;
      }
      const int tries = superseded ? 3 : 2;
      if (attempt >= tries || !Retryable(s) || MsUntil(expiry) <= 0) break;
      if (attempt == 1) {  // requests retried, not retries
        retried++;
        metrics.Retried();
      }
      Log("request %lld failed on generation %lld (%s); checking the "
          "devices, "
          "then retrying it",
          static_cast<long long>(seq), static_cast<long long>(g->id()),
          s.message().c_str());
      OnRequestFailure(g);
    }
    return last;
  }

  // A request answered: its output, the generation that computed it and
  // its latency in board time.
  struct Served {
    Answer answer;
    int64_t seq = 0;
    double ms = 0;
  };

  // The one request path of both the gRPC Infer and the HTTP API: counts
  // the request, makes its input (an error there is the request's), runs
  // it with retries and records its latency. `client` names it in the log.
  StatusOr<Served> ServeRequest(const std::function<StatusOr<Tensor>()>& input,
                                Clock::time_point t0, Clock::time_point expiry,
                                const std::string& client) {
    struct Leaves {
      std::atomic<int64_t>& n;
      ~Leaves() { --n; }
    } leaves{requests_in_flight};
    if (++requests_in_flight > opts.max_in_flight) {
      // Counted, not logged: a flood would fill the log.
      const Status s = ResourceExhausted(
          "shoal serve has " + std::to_string(opts.max_in_flight) +
          " requests in flight, its limit (--max-in-flight): try again later");
      metrics.RequestStarted();
      metrics.RequestEnded(s, 0);
      failed++;
      return s;
    }
    accepted++;
    const int64_t seq = next_seq++;
    // However the call ends (an exception caught by GuardRpc or the HTTP
    // server included), it is counted once, by the status it ended with.
    struct Ended {
      ServeMetrics& m;
      Clock::time_point t0;
      Status s = Internal("ended on an unexpected condition");
      ~Ended() { m.RequestEnded(s, MsSince(t0) / 1e3); }
    } ended{metrics, t0};
    metrics.RequestStarted();
    auto fail = [&](const Status& s) {
      ended.s = s;
      failed++;
      Log("request %lld%s%s failed: %s", static_cast<long long>(seq),
          client.empty() ? "" : " from ", client.c_str(), s.message().c_str());
      return s;
    };
    auto x = input();
    if (!x.ok()) return fail(x.status());
    auto answer = RunWithRetries(*x, seq, expiry);
    if (!answer.ok()) return fail(answer.status());
    answered++;
    // Board time on a dilated emulated cluster (Coordinator::dilation);
    // the Prometheus histogram keeps this host's time.
    const double ms = MsSince(t0) / answer->generation->coord().dilation();
    ended.s = Status::Ok();
    history.Add(ms);
    {
      std::lock_guard<std::mutex> lock(mu);
      latencies.push_back(ms);
    }
    return Served{std::move(answer).value(), seq, ms};
  }

  grpc::Status Infer(grpc::ServerContext* ctx, const rpc::InferRequest* req,
                     rpc::InferReply* rep) override {
    return GuardRpc(std::string("shoal serve"), "Infer", [&]() -> grpc::Status {
      if (auto s = RequireRole(*ctx, tls.get(), TlsRole::kCoordinator,
                               "shoal serve", "Infer");
          !s.ok()) {
        return s;
      }
      const auto t0 = Clock::now();
      if (auto s = CheckProtocol(req->protocol(), "shoal serve"); !s.ok()) {
        accepted++;
        next_seq++;
        metrics.RequestStarted();
        metrics.RequestEnded(InvalidArgument(s.error_message()), 0);
        failed++;
        return s;
      }
      auto served = ServeRequest([&] { return InputOf(*req); }, t0,
                                 ExpiryOf(*ctx, t0), req->client_id());
      if (!served.ok()) return ToGrpc(served.status());
      const Answer& answer = served->answer;
      for (int64_t v : answer.out.shape) rep->add_shape(v);
      TensorToBytes(answer.out, rep->mutable_data());
      rep->set_generation(answer.generation->id());
      rep->set_attempts(answer.attempts);
      rep->set_request(served->seq);
      rep->set_latency_ms(served->ms);
      return grpc::Status::OK;
    });
  }

  // The HTTP API's requests (serve/http_api.h): the same path, within
  // --timeout-ms.
  StatusOr<Tensor> ServeHttp(const std::function<StatusOr<Tensor>()>& input,
                             const std::string& client) {
    const auto t0 = Clock::now();
    ASSIGN_OR_RETURN(
        Served served,
        ServeRequest(input, t0, t0 + std::chrono::milliseconds(opts.timeout_ms),
                     client));
    return std::move(served.answer.out);
  }

  grpc::Status ServeStatus(grpc::ServerContext* ctx,
                           const rpc::ServeStatusRequest* req,
                           rpc::ServeStatusReply* rep) override {
    return GuardRpc(
        std::string("shoal serve"), "ServeStatus", [&]() -> grpc::Status {
          if (auto s = RequireRole(*ctx, tls.get(), TlsRole::kCoordinator,
                                   "shoal serve", "ServeStatus");
              !s.ok()) {
            return s;
          }
          if (auto s = CheckProtocol(req->protocol(), "shoal serve"); !s.ok()) {
            return s;
          }
          *rep = Snapshot();
          return grpc::Status::OK;
        });
  }

  rpc::ServeStatusReply Snapshot() {
    rpc::ServeStatusReply r;
    r.set_protocol(kProtocolVersion);
    r.set_model(opts.model.spec);
    for (int64_t v : model.graph.tensors.at(model.graph.inputs[0]).shape) {
      r.add_input_shape(v);
    }
    std::lock_guard<std::mutex> lock(mu);
    r.set_accepted(accepted);
    r.set_answered(answered);
    r.set_failed(failed);
    r.set_retried(retried);
    r.set_latency_ms_p50(last_p50);
    for (const auto& x : replans) *r.add_replans() = x;
    if (current) {
      r.set_generation(current->id());
      r.set_strategy(current->strategy());
      r.set_in_flight(current->InFlight());
      const auto& devs = current->devices();
      for (size_t d = 0; d < devs.size(); ++d) {
        auto* o = r.add_devices();
        o->set_name(devs[d].name);
        o->set_address(devs[d].address);
        o->set_share(devs[d].speed);
        o->set_predicted_ms(current->predicted_ms()[d]);
        if (d < last_loads.size()) {
          o->set_measured_ms(last_loads[d].measured_ms);
          o->set_queue_mean(last_loads[d].queue_mean);
        }
        o->set_state("serving");
        o->set_link_bandwidth_bps(devs[d].link.bandwidth_bps);
        o->set_link_latency_s(devs[d].link.latency_s);
        if (d < last_loads.size())
          o->set_utilisation(last_loads[d].utilisation);
      }
    }
    for (const auto& m : members) {
      if (m.state == Member::kServing) continue;
      auto* o = r.add_devices();
      o->set_name(m.spec.name);
      o->set_address(m.spec.address);
      o->set_share(m.spec.speed);
      o->set_state(StateName(m.state));
      o->set_link_bandwidth_bps(m.spec.link.bandwidth_bps);
      o->set_link_latency_s(m.spec.link.latency_s);
    }
    return r;
  }

  // --- Membership (serve/membership.h) -----------------------------------

  // The devices the next plan should use, in cluster-file order: speeds the
  // current plan assumed where it has them, else the cluster file's.
  std::vector<DeviceSpec> Candidates() {
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

  // --- Monitoring ---------------------------------------------------------

  // Caller holds monitor_mu. One monitoring step: membership first (a
  // lost, returned or new device re-plans), then a device that lost its
  // deployment, then the window's statistics and a rebalance.
  void TickLocked() {
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
      Log("statistics of generation %lld: %s",
          static_cast<long long>(cur->id()), stats.status().message().c_str());
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

  // Reloads the cluster file when asked (SIGHUP) or due (--watch), and
  // checks every member; what changed, as events. `broken`: a device of
  // the current plan stopped answering. Caller holds monitor_mu.
  std::vector<std::string> WatchMembersLocked(bool* broken) {
    std::vector<std::string> events;
    const bool watch_due =
        opts.watch_s > 0 && MsSince(last_reload) >= opts.watch_s * 1e3;
    if (reload_requested.exchange(false) || watch_due) {
      last_reload = Clock::now();
      std::vector<std::string> log;
      ReloadMembers(opts.cluster_file, tls, &members, mu, &events, &log);
      for (const auto& line : log) Log("%s", line.c_str());
    }
    *broken = CheckMembers(&members, mu, &events);
    return events;
  }

  // No plan, a plan device that is no longer serving, or a device waiting
  // to join. Caller holds monitor_mu.
  bool StaleLocked(const std::shared_ptr<Generation>& cur, bool broken) const {
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

  // A re-plan over the members serving now. A join that failed to deploy
  // is tried again after the cooldown; a lost device, at once. Caller holds
  // monitor_mu.
  void ReplanMembershipLocked(const std::shared_ptr<Generation>& cur,
                              bool broken,
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
      Log("re-plan failed: %s", s.message().c_str());
    }
  }

  // A re-plan at the measured speeds when one device is out of balance
  // with the others. Caller holds monitor_mu.
  void RebalanceLocked(const std::shared_ptr<Generation>& cur,
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
        Log("not re-planning yet (%s): it would undo the re-plan for %s of "
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
    if (!s.ok()) Log("re-plan failed: %s", s.message().c_str());
    if (next_generation != before) {
      last_move[who] = {direction, Clock::now()};
    }
  }

  void Summarize(const std::shared_ptr<Generation>& cur,
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
                    "%zu answered in %.1f s, median %s", lat.size(),
                    since / 1e3, HumanMs(Median(lat)).c_str());
    }
    Log("generation %lld (%s): %s; compute per request measured/predicted: "
        "%s",
        static_cast<long long>(cur->id()), cur->strategy().c_str(), answered,
        per.c_str());
  }

  // Plan devices that answer but no longer hold `cur`'s deployment (the
  // worker restarted, or another coordinator deployed to it) get it again;
  // where that fails, a re-plan without them. Whether any was found.
  // Caller holds monitor_mu, after CheckMembers.
  bool RedeployLostLocked(const std::shared_ptr<Generation>& cur) {
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
      Log("device(s) %s lost generation %lld's deployment (restarted, or "
          "another plan was deployed there): redeployed in %.0f ms",
          names.c_str(), static_cast<long long>(cur->id()), MsSince(t0));
      return true;
    }
    Log("device(s) %s lost generation %lld's deployment and redeploying "
        "failed (%s): re-planning",
        names.c_str(), static_cast<long long>(cur->id()), s.message().c_str());
    s = ReplanLocked("device_lost", "redeploying to " + names + " failed",
                     Candidates(),
                     /*broken=*/true, 0, false);
    if (!s.ok()) {
      last_failure = Clock::now();
      Log("re-plan failed: %s", s.message().c_str());
    }
    return true;
  }

  // A request failed on `g`: if `g` is still current, check the devices
  // now (re-planning if one left) so that the retry finds a working plan.
  void OnRequestFailure(const std::shared_ptr<Generation>& g) {
    std::lock_guard<std::mutex> lock(monitor_mu);
    {
      std::lock_guard<std::mutex> l(mu);
      if (current != g || stopping) return;
    }
    TickLocked();
  }

  // --- Re-planning --------------------------------------------------------

  // Plans for `devs`, deploys alongside the current plan and switches.
  // `broken`: the current plan lost a device, so its requests in flight are
  // cancelled (and retried once) instead of drained. Without `force`, a
  // plan that runs the same tasks on the same devices, or that does not
  // predict `min_gain` better, is not deployed: the measured speeds are
  // adopted as the current plan's instead. Caller holds monitor_mu.
  // `kind`: what caused it, for rpc::Replan.kind and the metrics.
  Status ReplanLocked(const std::string& kind, const std::string& reason,
                      std::vector<DeviceSpec> devs, bool broken,
                      double measured_ms, bool force) {
    Status s = ReplanOnceLocked(kind, reason, std::move(devs), broken,
                                measured_ms, force);
    if (!s.ok()) metrics.ReplanFailed();
    return s;
  }

  Status ReplanOnceLocked(const std::string& kind, const std::string& reason,
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
      return Unavailable("no device of " + opts.cluster_file +
                         " answers; the server keeps trying");
    }
    PlanOptions base;
    base.strategy = strategy;
    base.model = opts.model;
    base.objective = opts.objective;
    base.concurrency = opts.concurrency;
    base.ilp_time_limit_s = opts.time_limit_s;
    ASSIGN_OR_RETURN(PlanChoice choice,
                     PlanForDevices(model.graph, base, devs));
    ASSIGN_OR_RETURN(std::vector<double> pred,
                     PredictComputeMs(choice.plan, devs));
    if (cur && !broken) {
      ASSIGN_OR_RETURN(
          ReplanVerdict v,
          JudgeAgainstCurrent(cur->plan(), cur->devices(), choice.plan, pred,
                              devs, force, opts.min_gain));
      if (v.keep_current) {
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
      report.old_requests =
          RetireLocked(old, broken, reason, report.generation);
      for (const auto& l : loads_before) {
        report.measured_before_ms.push_back(l.measured_ms);
      }
    }
    report.switch_ms = MsSince(t0);
    {
      std::lock_guard<std::mutex> lock(mu);
      replans[record].set_switch_ms(report.switch_ms);
    }
    Log("%s", SwitchReportText(report).c_str());
    window.Clear();
    last_replan = Clock::now();
    return Status::Ok();
  }

  // No switch: the current plan stays and takes the measured speeds.
  void KeepCurrentLocked(const std::shared_ptr<Generation>& cur,
                         const ReplanVerdict& v, double best_new_ms,
                         const std::string& reason) {
    Log("no new plan (%s): %s; the current plan's busiest device is "
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

  // Deploys `plan` alongside the current one; where the devices cannot
  // hold both, drains the current one (requests wait) and deploys alone. On
  // failure the current plan serves again.
  StatusOr<std::unique_ptr<Coordinator>> DeployNextLocked(
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
      Log("the devices cannot hold both plans (%s); draining generation %lld "
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

  // Makes the deployed plan current: new requests go to it from here on.
  // Records the re-plan with the switch, so that a status showing
  // generation g also shows its re-plan (the switch time follows after the
  // drain); returns the record's index, and the old generation in *old.
  size_t SwitchToLocked(PlanChoice choice, const std::vector<DeviceSpec>& devs,
                        const std::vector<double>& pred,
                        std::unique_ptr<Coordinator> coord,
                        const std::string& kind, const std::string& reason,
                        double measured_ms, std::shared_ptr<Generation>* old,
                        SwitchReport* report) {
    report->strategy = choice.strategy;
    report->note = choice.note;
    report->reason = reason;
    report->devices = devs;
    report->predicted_ms = pred;
    std::lock_guard<std::mutex> lock(mu);
    auto gen = std::make_shared<Generation>(
        next_generation++, std::move(choice), devs, pred, std::move(coord));
    *old = current;
    current = gen;
    report->generation = gen->id();
    report->first = *old == nullptr;
    metrics.Replanned(kind);
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

  // Ends the old generation: its requests drain (or, when it lost a device,
  // are cancelled to be retried once on `next`), then its deployment is
  // released. Returns how many requests it still held.
  int RetireLocked(const std::shared_ptr<Generation>& old, bool broken,
                   const std::string& reason, int64_t next) {
    const int held = old->InFlight();
    if (broken) {
      old->coord().Cancel(Unavailable(
          "generation " + std::to_string(old->id()) + " lost a device (" +
          reason + "); requests in flight on it are " +
          "retried once on generation " + std::to_string(next)));
    }
    if (!old->WaitIdle(Clock::now() +
                       std::chrono::milliseconds(opts.timeout_ms + 2000))) {
      Log("generation %lld still has %d requests after the deadline",
          static_cast<long long>(old->id()), old->InFlight());
    }
    old->coord().Release();  // best effort: a dead device is skipped
    return held;
  }

  // --- Lifecycle ----------------------------------------------------------

  void MonitorLoop() {
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
        std::fprintf(stderr,
                     "shoal serve: monitor tick failed on an unexpected "
                     "condition: %s\n",
                     e.what());
      }
    }
  }

  // GET /metrics of --metrics.
  HttpReply MetricsPage() {
    HttpReply r;
    r.content_type = kExpositionContentType;
    r.body = metrics.Scrape(Snapshot());
    return r;
  }

  // GET /api/status of --dashboard.
  nlohmann::json DashboardStatus() {
    DashboardState st;
    st.status = Snapshot();
    std::shared_ptr<Generation> cur;
    {
      std::lock_guard<std::mutex> lock(mu);
      cur = current;
    }
    if (cur) st.plan = &cur->plan();  // a generation's plan never changes
    st.latency_buckets = metrics.LatencyBuckets();
    st.history = history.Points();
    st.uptime_s = MsSince(started) / 1e3;
    return DashboardJson(st);
  }

  // Reads the options, the cluster file (its devices become the members)
  // and the model.
  Status Configure(const ServeOptions& o) {
    opts = o;
    if (opts.max_message_bytes > 0) max_msg = opts.max_message_bytes;
    window = LoadWindow(std::max(1, opts.window_ticks));
    strategy = opts.strategy.empty() ? DefaultServeStrategy() : opts.strategy;
    ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(opts.cluster_file));
    if (cluster.tls.any()) {
      auto identity = LoadTlsIdentity(cluster.tls);
      if (!identity.ok()) {
        return identity.status().WithContext("the tls block of " +
                                             opts.cluster_file);
      }
      tls = std::move(identity).value();
    }
    if (cluster.devices.empty()) {
      return InvalidArgument("cluster " + opts.cluster_file +
                             " has no devices");
    }
    for (const auto& d : cluster.devices) {
      if (d.address.empty()) {
        return InvalidArgument("device " + d.name + " of " + opts.cluster_file +
                               " has no address");
      }
      members.push_back(MakeMember(d, tls));
    }
    ASSIGN_OR_RETURN(model, LoadPlanModel(opts.model, true));
    if (model.graph.inputs.size() != 1) {
      return Unsupported("shoal serve takes models with one input; " +
                         opts.model.spec + " has " +
                         std::to_string(model.graph.inputs.size()));
    }
    if (!opts.http_token_file.empty()) {
      ASSIGN_OR_RETURN(http_token, ReadHttpToken(opts.http_token_file));
    }
    WarnPlainText();
    Log("model %s, cluster %s (%zu devices), strategy %s",
        opts.model.spec.c_str(), opts.cluster_file.c_str(),
        cluster.devices.size(), strategy.c_str());
    return Status::Ok();
  }

  // --http-token-file: one line of at least 16 printable characters
  // without spaces (what a header carries unchanged).
  static StatusOr<std::string> ReadHttpToken(const std::string& path) {
    ASSIGN_OR_RETURN(std::string t,
                     ReadBoundedFile(path, 4096, "--http-token-file"));
    while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
    bool printable = true;
    for (char c : t) printable &= c > ' ' && c < 127;
    if (t.size() < 16 || !printable) {
      return InvalidArgument(
          "--http-token-file " + path +
          ": the token must be one line of at least 16 printable characters "
          "without spaces (e.g. openssl rand -hex 32 > " +
          path + ")");
    }
    return t;
  }

  // What anyone who reaches a port beyond this machine gets without TLS:
  // said once at start, as the worker does for its gRPC port.
  void WarnPlainText() {
    if (tls) return;
    std::vector<std::pair<const char*, std::string>> open;
    for (const auto& [flag, listen] :
         {std::pair<const char*, const std::string&>{"--listen", opts.listen},
          {"--metrics", opts.metrics_listen},
          {"--dashboard", opts.dashboard_listen},
          {"--http", opts.http_listen}}) {
      if (!listen.empty() && !IsLoopbackListen(listen)) {
        open.emplace_back(flag, listen);
      }
    }
    if (open.empty()) return;
    std::string list;
    for (const auto& [flag, listen] : open) {
      list += std::string(list.empty() ? "" : ", ") + flag + " " + listen;
    }
    Log("warning: %s listen%s beyond this machine in plain text (the cluster "
        "file has no tls block): anyone on the network reads the requests "
        "and answers%s; give the cluster file a tls block, or listen on "
        "127.0.0.1 (docs/security.md)",
        list.c_str(), open.size() == 1 ? "s" : "",
        http_token.empty()
            ? ", the cluster's state and device addresses, and may send "
              "requests"
            : ", and the bearer token itself");
  }

  HttpServerOptions HttpOptions() const {
    HttpServerOptions o;
    o.tls = tls;
    o.bearer_token = http_token;
    return o;
  }

  // The model as the HTTP API describes it, and how it answers.
  std::shared_ptr<const HttpApi> MakeHttpApi() {
    auto api = std::make_shared<HttpApi>();
    const Graph& g = model.graph;
    api->model.name = ModelName();
    api->model.input_name = g.inputs[0];
    api->model.input_shape = g.tensors.at(g.inputs[0]).shape;
    api->model.output_name = g.outputs[0];
    api->model.output_shape = g.tensors.at(g.outputs[0]).shape;
    api->class_names = KnownClassNames(NumElements(api->model.output_shape));
    api->random_weights = Zoo::Global().Find(opts.model.spec) != nullptr;
    api->ready = [this] {
      std::lock_guard<std::mutex> lock(mu);
      return current != nullptr && !stopping;
    };
    api->run = [this](const std::function<StatusOr<Tensor>()>& input,
                      const std::string& client) {
      return ServeHttp(input, client);
    };
    return api;
  }

  // The name clients use: a zoo model's, or an ONNX file's without its
  // folder and extension.
  std::string ModelName() const {
    std::string n = opts.model.spec;
    if (auto slash = n.rfind('/'); slash != std::string::npos) {
      n = n.substr(slash + 1);
    }
    if (n.size() > 5 && n.substr(n.size() - 5) == ".onnx") {
      n.resize(n.size() - 5);
    }
    return n;
  }

  static std::string UrlOf(const HttpServer& s, const std::string& listen) {
    return std::string(s.https() ? "https" : "http") + "://" +
           listen.substr(0, listen.rfind(':')) + ":" +
           std::to_string(s.port()) + "/";
  }

  // The --metrics, --dashboard and --http servers, where asked for, under
  // one trust (docs/security.md).
  Status StartHttpServers() {
    if (!opts.metrics_listen.empty()) {
      auto http = HttpServer::Start(
          opts.metrics_listen, "shoal serve --metrics",
          {{"/metrics", [this] { return MetricsPage(); }}}, HttpOptions());
      if (!http.ok()) {
        Stop();
        return http.status();
      }
      metrics_http = std::move(http).value();
      Log("metrics on %s (port %d): GET /metrics",
          UrlOf(*metrics_http, opts.metrics_listen).c_str(),
          metrics_http->port());
    }
    if (!opts.dashboard_listen.empty()) {
      std::vector<HttpRoute> routes;
      for (auto& [path, page] :
           DashboardRoutes([this] { return DashboardStatus(); })) {
        routes.push_back({"GET", path, [page = page](const HttpRequest&) {
                            return page();
                          }});
      }
      // The page's form sends an image through the same request path.
      routes.push_back(DashboardClassifyRoute(MakeHttpApi()));
      HttpServerOptions o = HttpOptions();
      o.max_body_bytes = opts.http_max_body_bytes;
      auto http = HttpServer::Start(opts.dashboard_listen,
                                    "shoal serve --dashboard", routes, o);
      if (!http.ok()) {
        Stop();
        return http.status();
      }
      dashboard_http = std::move(http).value();
      Log("dashboard on %s",
          UrlOf(*dashboard_http, opts.dashboard_listen).c_str());
    }
    if (!opts.http_listen.empty()) {
      HttpServerOptions o = HttpOptions();
      o.max_body_bytes = opts.http_max_body_bytes;
      // A request holds a thread until it is answered: enough for the
      // requests a plan pipelines, few enough that bodies stay bounded.
      o.threads = 8;
      o.io_timeout_ms = 30000;  // a large body on a Wi-Fi link
      auto http = HttpServer::Start(opts.http_listen, "shoal serve --http",
                                    HttpApiRoutes(MakeHttpApi()), o);
      if (!http.ok()) {
        Stop();
        return http.status();
      }
      api_http = std::move(http).value();
      Log("HTTP inference API on %s (port %d): model %s, POST "
          "/v2/models/%s/infer, POST /v1/models/%s/classify",
          UrlOf(*api_http, opts.http_listen).c_str(), api_http->port(),
          ModelName().c_str(), ModelName().c_str(), ModelName().c_str());
    }
    return Status::Ok();
  }

  // Plans for the members that answer and deploys the first generation.
  Status DeployFirstPlan() {
    std::lock_guard<std::mutex> lock(monitor_mu);
    std::vector<std::string> events;
    CheckMembers(&members, mu, &events);
    std::string down;
    for (const auto& mem : members) {
      if (mem.state == Member::kDown) down += "; " + mem.why;
    }
    if (Candidates().empty()) {
      return Unavailable("no device of " + opts.cluster_file + " answers" +
                         down);
    }
    if (!down.empty()) {
      Log("starting without the devices that do not answer%s", down.c_str());
    }
    return ReplanLocked("start", "start", Candidates(), true, 0, true);
  }

  // The Inference service on --listen.
  Status Listen() {
    grpc::ServerBuilder b;
    b.AddListeningPort(opts.listen, ServerCredentialsFor(tls.get()), &port);
    ConfigureServer(&b, max_msg);
    b.RegisterService(this);
    grpc_server = b.BuildAndStart();
    if (!grpc_server || port == 0) {
      Status s = Unavailable("shoal serve cannot listen on " + opts.listen);
      Stop();
      return s;
    }
    return Status::Ok();
  }

  void Stop() {
    // Their pages read what is stopped below.
    metrics_http.reset();
    dashboard_http.reset();
    api_http.reset();
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) return;
      stopping = true;
      cv.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(stop_mu);
      monitor_stop = true;
      stop_cv.notify_all();
    }
    if (monitor.joinable()) monitor.join();
    std::shared_ptr<Generation> cur;
    {
      std::lock_guard<std::mutex> lock(mu);
      cur = current;
    }
    // Requests running get 3 s to finish; new ones are refused already.
    if (cur) {
      cur->WaitIdle(Clock::now() + std::chrono::seconds(3));
      cur->coord().Cancel(Unavailable("shoal serve is shutting down"));
    }
    if (grpc_server) grpc_server->Shutdown(DeadlineIn(1000));
    if (cur) cur->coord().Release();
    Log("stopped: %lld requests accepted, %lld answered, %lld failed, %lld "
        "retried",
        static_cast<long long>(accepted.load()),
        static_cast<long long>(answered.load()),
        static_cast<long long>(failed.load()),
        static_cast<long long>(retried.load()));
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() { impl_->Stop(); }

int Server::port() const { return impl_->port; }

int Server::metrics_port() const {
  return impl_->metrics_http ? impl_->metrics_http->port() : 0;
}

int Server::dashboard_port() const {
  return impl_->dashboard_http ? impl_->dashboard_http->port() : 0;
}

int Server::http_port() const {
  return impl_->api_http ? impl_->api_http->port() : 0;
}

void Server::Wait() {
  std::unique_lock<std::mutex> lock(impl_->mu);
  impl_->cv.wait(lock, [&] { return impl_->stopping; });
}

void Server::Shutdown() { impl_->Stop(); }

void Server::Reload() { impl_->reload_requested = true; }

Status Server::Rebalance(const std::map<std::string, double>& speeds,
                         const std::string& reason) {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> lock(m.monitor_mu);
  std::vector<DeviceSpec> devs;
  {
    std::lock_guard<std::mutex> l(m.mu);
    if (!m.current) return Unavailable("no plan is deployed");
    devs = m.current->devices();
  }
  for (auto& d : devs) {
    auto it = speeds.find(d.name);
    if (it == speeds.end()) continue;
    if (!(it->second > 0)) {
      return InvalidArgument("speed of device " + d.name + " must be > 0");
    }
    d.speed = it->second;
  }
  for (const auto& [name, s] : speeds) {
    bool found = false;
    for (const auto& d : devs) found |= d.name == name;
    if (!found) return InvalidArgument("no device " + name + " in the plan");
  }
  return m.ReplanLocked("manual", reason, devs, false, 0, true);
}

rpc::ServeStatusReply Server::Snapshot() { return impl_->Snapshot(); }

StatusOr<std::unique_ptr<Server>> Server::Start(const ServeOptions& opts) {
  auto impl = std::make_unique<Impl>();
  Impl& m = *impl;
  RETURN_IF_ERROR(m.Configure(opts));
  // Before planning and deploying: an address that cannot be bound fails
  // the start at once, not after the weights went out.
  RETURN_IF_ERROR(m.StartHttpServers());
  RETURN_IF_ERROR(m.DeployFirstPlan());
  RETURN_IF_ERROR(m.Listen());
  Log("listening on %s (port %d); monitoring every %.1f s", opts.listen.c_str(),
      m.port, opts.monitor_interval_s);
  Impl* p = impl.get();
  m.monitor = std::thread([p] { p->MonitorLoop(); });
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

}  // namespace shoal
