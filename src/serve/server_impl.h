// The server's state, shared by the files that implement it: its
// lifecycle (server.cc), requests (server_requests.cc), status pages
// (server_status.cc), monitor (server_monitor.cc) and re-planning
// (server_replan.cc). Internal to serve/: nothing outside includes it.
#ifndef SHOAL_SERVE_SERVER_IMPL_H_
#define SHOAL_SERVE_SERVER_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "metrics/http_server.h"
#include "models/zoo.h"
#include "runtime/wire.h"
#include "serve/generation.h"
#include "serve/http_api.h"
#include "serve/latency_history.h"
#include "serve/membership.h"
#include "serve/monitor.h"
#include "serve/recent_events.h"
#include "serve/replan.h"
#include "serve/serve_log.h"
#include "serve/serve_metrics.h"
#include "serve/server.h"
#include "shoal.grpc.pb.h"

namespace shoal {

using Clock = std::chrono::steady_clock;

inline int64_t MsUntil(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now())
      .count();
}

// A failure a second try on a newer plan can fix: a device that cannot be
// reached, aborted the request, lost its deployment, or was full.
inline bool Retryable(const Status& s) {
  return s.code() == Code::kUnavailable ||
         s.code() == Code::kFailedPrecondition ||
         s.code() == Code::kResourceExhausted;
}

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
  // The latest opts.replans_kept re-plans, oldest first.
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
  // What the dashboard lists beside the counts: the re-plans not made
  // (declined by the judgement, or failed) and the requests that failed,
  // each with its reason, the latest few.
  RecentEvents replans_not_made{20};
  RecentEvents request_errors{20};
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
  std::shared_ptr<Generation> Acquire(Clock::time_point expiry, Status* why);

  // The request's input, checked against the model's input shape.
  StatusOr<Tensor> InputOf(const rpc::InferRequest& req);

  // When the request stops being worth answering: --timeout-ms after it
  // arrived at `t0`, or the client's deadline where that comes first.
  Clock::time_point ExpiryOf(const grpc::ServerContext& ctx,
                             Clock::time_point t0);

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
                                  Clock::time_point expiry);

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
                                const std::string& client);

  grpc::Status Infer(grpc::ServerContext* ctx, const rpc::InferRequest* req,
                     rpc::InferReply* rep) override;

  // The HTTP API's requests (serve/http_api.h): the same path, within
  // --timeout-ms.
  StatusOr<Tensor> ServeHttp(const std::function<StatusOr<Tensor>()>& input,
                             const std::string& client);

  grpc::Status ServeStatus(grpc::ServerContext* ctx,
                           const rpc::ServeStatusRequest* req,
                           rpc::ServeStatusReply* rep) override;

  rpc::ServeStatusReply Snapshot();

  // --- Discovery (--discover; server_discover.cc) ---------------------------

  // Where the devices come from, for messages: the cluster file, or DNS-SD
  // without one.
  std::string DeviceSource() const {
    return opts.cluster_file.empty() ? "DNS-SD" : opts.cluster_file;
  }

  // The usable workers of the latest DNS-SD scan, and whether the monitor
  // has yet to apply them.
  std::mutex found_mu;
  std::vector<DeviceSpec> found;  // guarded by found_mu
  bool found_fresh = false;       // guarded by found_mu
  std::thread discoverer;

  // One browse of DNS-SD: the workers that answered, as devices. Fails
  // where browsing cannot be done (avahi-daemon not running).
  StatusOr<std::vector<DeviceSpec>> ScanForWorkers();
  // Scans every --discover seconds until the server stops.
  void DiscoverLoop();
  // The latest scan's workers; `fresh`: they changed since the last call.
  std::vector<DeviceSpec> FoundWorkers(bool* fresh);

  // --- Membership (serve/membership.h) -----------------------------------

  // The devices the next plan should use, in cluster-file order: speeds the
  // current plan assumed where it has them, else the cluster file's.
  std::vector<DeviceSpec> Candidates();

  // --- Monitoring ---------------------------------------------------------

  // Caller holds monitor_mu. One monitoring step: membership first (a
  // lost, returned or new device re-plans), then a device that lost its
  // deployment, then the window's statistics and a rebalance.
  void TickLocked();

  // Reloads the cluster file when asked (SIGHUP) or due (--watch), and
  // checks every member; what changed, as events. `broken`: a device of
  // the current plan stopped answering. Caller holds monitor_mu.
  std::vector<std::string> WatchMembersLocked(bool* broken);

  // No plan, a plan device that is no longer serving, or a device waiting
  // to join. Caller holds monitor_mu.
  bool StaleLocked(const std::shared_ptr<Generation>& cur, bool broken) const;

  // A re-plan over the members serving now. A join that failed to deploy
  // is tried again after the cooldown; a lost device, at once. Caller holds
  // monitor_mu.
  void ReplanMembershipLocked(const std::shared_ptr<Generation>& cur,
                              bool broken,
                              const std::vector<std::string>& events);

  // A re-plan at the measured speeds when one device is out of balance
  // with the others. Caller holds monitor_mu.
  void RebalanceLocked(const std::shared_ptr<Generation>& cur,
                       const std::vector<DeviceLoad>& loads,
                       const std::vector<std::string>& names);

  void Summarize(const std::shared_ptr<Generation>& cur,
                 const std::vector<DeviceLoad>& loads,
                 const std::vector<std::string>& names);

  // Plan devices that answer but no longer hold `cur`'s deployment (the
  // worker restarted, or another coordinator deployed to it) get it again;
  // where that fails, a re-plan without them. Whether any was found.
  // Caller holds monitor_mu, after CheckMembers.
  bool RedeployLostLocked(const std::shared_ptr<Generation>& cur);

  // A request failed on `g`: if `g` is still current, check the devices
  // now (re-planning if one left) so that the retry finds a working plan.
  void OnRequestFailure(const std::shared_ptr<Generation>& g);

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
                      double measured_ms, bool force);

  Status ReplanOnceLocked(const std::string& kind, const std::string& reason,
                          std::vector<DeviceSpec> devs, bool broken,
                          double measured_ms, bool force);

  // No switch: the current plan stays and takes the measured speeds.
  void KeepCurrentLocked(const std::shared_ptr<Generation>& cur,
                         const ReplanVerdict& v, double best_new_ms,
                         const std::string& reason);

  // Deploys `plan` alongside the current one; where the devices cannot
  // hold both, drains the current one (requests wait) and deploys alone. On
  // failure the current plan serves again.
  StatusOr<std::unique_ptr<Coordinator>> DeployNextLocked(
      const Plan& plan, const std::vector<DeviceSpec>& devs,
      const std::shared_ptr<Generation>& cur, bool broken,
      const std::string& reason, SwitchReport* report);

  // Makes the deployed plan current: new requests go to it from here on.
  // Records the re-plan with the switch, so that a status showing
  // generation g also shows its re-plan (the switch time follows after the
  // drain); returns the record's index, and the old generation in *old.
  size_t SwitchToLocked(PlanChoice choice, const std::vector<DeviceSpec>& devs,
                        const std::vector<double>& pred,
                        std::unique_ptr<Coordinator> coord,
                        const std::string& kind, const std::string& reason,
                        double measured_ms, std::shared_ptr<Generation>* old,
                        SwitchReport* report);

  // Ends the old generation: its requests drain (or, when it lost a device,
  // are cancelled to be retried once on `next`), then its deployment is
  // released. Returns how many requests it still held.
  int RetireLocked(const std::shared_ptr<Generation>& old, bool broken,
                   const std::string& reason, int64_t next);

  // --- Lifecycle ----------------------------------------------------------

  void MonitorLoop();

  // GET /metrics of --metrics.
  HttpReply MetricsPage();

  // GET /api/status of --dashboard.
  nlohmann::json DashboardStatus();

  // Reads the options, the cluster file (its devices become the members)
  // and the model.
  Status Configure(const ServeOptions& o);

  // --http-token-file: one line of at least 16 printable characters
  // without spaces (what a header carries unchanged).
  static StatusOr<std::string> ReadHttpToken(const std::string& path);

  // What anyone who reaches a port beyond this machine gets without TLS:
  // said once at start, as the worker does for its gRPC port.
  void WarnPlainText();

  HttpServerOptions HttpOptions() const;

  // The model as the HTTP API describes it, and how it answers.
  std::shared_ptr<const HttpApi> MakeHttpApi();

  // The name clients use: a zoo model's, or an ONNX file's without its
  // folder and extension.
  std::string ModelName() const;

  static std::string UrlOf(const HttpServer& s, const std::string& listen);

  // The --metrics, --dashboard and --http servers, where asked for, under
  // one trust (docs/security.md).
  Status StartHttpServers();

  // Plans for the members that answer and deploys the first generation.
  Status DeployFirstPlan();

  // The Inference service on --listen.
  Status Listen();

  void Stop();
};

}  // namespace shoal

#endif  // SHOAL_SERVE_SERVER_IMPL_H_
