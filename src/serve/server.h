// `shoal serve`: a long-running coordinator. It plans a model over the
// cluster's workers, deploys, and answers inference requests through the
// Inference gRPC service (proto/shoal.proto). A monitor pulls the workers'
// statistics and health every tick (the collaborative-execution paper's
// Step 3) and re-plans when a device is out of balance with what the plan
// predicted, leaves, restarts or joins. A new plan is deployed alongside the
// old one and switched to between requests: requests already running finish
// on the old plan (the drain), new ones go to the new plan, and a request
// that fails because a device died is retried exactly once on the new plan.
// docs/serve.md.
#ifndef SHOAL_SERVE_SERVER_H_
#define SHOAL_SERVE_SERVER_H_

#include <map>
#include <memory>
#include <string>

#include "partition/strategy.h"
#include "plan/plan.h"
#include "shoal.pb.h"
#include "util/status.h"

namespace shoal {

struct ServeOptions {
  std::string cluster_file;
  ModelRef model;
  std::string listen = "127.0.0.1:7600";  // port 0: any free port
  // Where workers reach this server's coordinators: a HOST only (each plan
  // generation listens on its own free port); "": the local address of
  // the route to the first device (CoordinatorOptions::advertise).
  std::string advertise;
  std::string strategy;  // "": auto once registered, else pipeline
  PlanObjective objective = PlanObjective::kLatency;  // auto
  int concurrency = 0;  // throughput: requests in flight (0: one per device)
  double time_limit_s = 10;  // auto: the MILP's time limit
  double monitor_interval_s = 1.0;
  int window_ticks = 4;     // statistics of this many ticks are judged
  int64_t min_samples = 3;  // runs per task before a device is judged
  double imbalance = 1.5;   // measured/predicted off the others' by this
  double min_gain = 0.10;   // a new plan must predict this much better
  double cooldown_s = 5;    // at least this long between re-plans for speed
  double watch_s = 0;       // re-read the cluster file this often (0: SIGHUP)
  // Browse DNS-SD this often for workers that announce themselves (0:
  // never); those found are members beside the cluster file's devices, and
  // `cluster_file` may then be "" (every device found).
  double discover_s = 0;
  int64_t timeout_ms = 30000;  // per request, unless the client's is sooner
  // Requests in flight at most (Infer calls and HTTP ones together): past
  // it a request is refused at once, RESOURCE_EXHAUSTED naming the limit,
  // rather than holding a thread while it waits for the cluster.
  int max_in_flight = 1024;
  int64_t max_message_bytes = 0;  // 0: kDefaultMaxMessageBytes
  bool rebalance = true;          // false: monitor and log, never re-plan
  double log_every_s = 5;         // a summary line this often
  // Re-plans the status reply, the dashboard and /api/status list, the
  // latest ones (shoal_serve_replans_total counts them all): a server that
  // re-plans for weeks would otherwise grow without bound, and so would its
  // status reply, past what a client receives.
  int replans_kept = 100;
  // HOST:PORT of the Prometheus endpoint (GET /metrics) and of the web
  // dashboard (docs/serve.md); "": none. Port 0: any free port.
  std::string metrics_listen;
  std::string dashboard_listen;
  // HOST:PORT of the HTTP inference API (serve/http_api.h); "": none.
  std::string http_listen;
  // The largest request body it reads (a tensor or an image).
  int64_t http_max_body_bytes = int64_t{16} << 20;
  // A file holding the bearer token every HTTP endpoint (API, metrics,
  // dashboard) then requires; "": none. With the cluster file's tls block
  // they serve HTTPS and take a coordinator certificate or the token.
  std::string http_token_file;
};

class Server {
 public:
  // Plans over the devices that answer, deploys, then listens. Fails when
  // no device answers, the model cannot be planned, or the port is taken.
  static StatusOr<std::unique_ptr<Server>> Start(const ServeOptions& opts);
  ~Server();

  int port() const;
  int metrics_port() const;    // 0: no metrics endpoint
  int dashboard_port() const;  // 0: no dashboard
  int http_port() const;       // 0: no HTTP inference API
  // Blocks until Shutdown().
  void Wait();
  // Stops taking requests, lets those running finish (a few seconds at
  // most), stops the monitor and releases the plan from the workers.
  void Shutdown();
  // Re-reads the cluster file at the next tick (what SIGHUP does).
  void Reload();
  // Re-plans now with these device speeds (by name; others keep theirs),
  // through the same path as the monitor's re-plans.
  Status Rebalance(const std::map<std::string, double>& speeds,
                   const std::string& reason);
  rpc::ServeStatusReply Snapshot();

  struct Impl;

 private:
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace shoal

#endif  // SHOAL_SERVE_SERVER_H_
