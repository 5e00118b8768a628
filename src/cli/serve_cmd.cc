// `shoal serve --cluster FILE.yaml --model MODEL`: the long-running
// coordinator (src/serve, docs/serve.md); `shoal infer-remote --server ADDR`:
// its example client.
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "cli/commands.h"
#include "cli/serve_config.h"
#include "cluster/cluster.h"
#include "graph/random_input.h"
#include "io/npy.h"
#include "runtime/peer_auth.h"
#include "runtime/wire.h"
#include "serve/client.h"
#include "serve/monitor.h"
#include "serve/serve_log.h"
#include "serve/server.h"
#include "serve/status_json.h"
#include "util/net_address.h"
#include "util/units.h"

namespace shoal {
namespace {

struct ServeArgs {
  ServeOptions o;
  std::string input_shape, max_message = "256MiB", objective = "latency",
                           http_max_body = "16MiB", log_format = "text", config;
  bool no_rebalance = false;
};

Status RunServe(ServeArgs a) {
  // Required, but from either place: the command line or --config.
  if ((a.o.cluster_file.empty() && a.o.discover_s <= 0) ||
      a.o.model.spec.empty()) {
    return InvalidArgument(
        "serve needs --model, and --cluster or --discover (or both), on the "
        "command line or as 'model:', 'cluster:' and 'discover:' in "
        "--config");
  }
  if (a.o.discover_s < 0 || a.o.discover_s > 3600) {
    char given[32];
    std::snprintf(given, sizeof(given), "%g", a.o.discover_s);
    return InvalidArgument(
        "--discover " + std::string(given) +
        ": give the seconds between browses, from 1 to 3600 (0: none)");
  }
  if (a.o.discover_s > 0 && a.o.discover_s < 1) a.o.discover_s = 1;
  ASSIGN_OR_RETURN(LogFormat log_format, ParseLogFormat(a.log_format));
  SetServeLogFormat(log_format);
  ASSIGN_OR_RETURN(auto shape, ParseInputShapeFlag(a.input_shape));
  if (shape) a.o.model.input_shape = *shape;
  ASSIGN_OR_RETURN(a.o.max_message_bytes, ParseBytes(a.max_message));
  ASSIGN_OR_RETURN(a.o.http_max_body_bytes, ParseBytes(a.http_max_body));
  if (a.o.http_max_body_bytes < 1024 ||
      a.o.http_max_body_bytes > (int64_t{1} << 30)) {
    return InvalidArgument("--http-max-body " + a.http_max_body +
                           ": give between 1KiB and 1GiB");
  }
  if (!a.o.advertise.empty()) {
    ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(a.o.advertise, "--advertise"));
    if (hp.port >= 0) {
      return InvalidArgument(
          "--advertise " + a.o.advertise +
          ": give serve a HOST only; each plan it deploys listens on a port "
          "of its own");
    }
  }
  a.o.rebalance = !a.no_rebalance;
  if (a.o.concurrency < 0) return InvalidArgument("--concurrency must be >= 0");
  if (a.o.max_in_flight < 1) {
    return InvalidArgument("--max-in-flight must be >= 1");
  }
  ASSIGN_OR_RETURN(a.o.objective, ParseObjective(a.objective));
  if (a.o.concurrency > 0 && a.o.objective != PlanObjective::kThroughput) {
    return InvalidArgument("--concurrency goes with --objective throughput");
  }
  if (!(a.o.monitor_interval_s > 0) || !(a.o.imbalance > 1) ||
      a.o.window_ticks < 1 || a.o.timeout_ms < 1 || a.o.min_gain < 0 ||
      a.o.min_gain >= 1) {
    return InvalidArgument(
        "--monitor-interval and --timeout-ms must be positive, --imbalance "
        "above 1, --window at least 1 and --min-gain in [0, 1)");
  }
  // Signals go to one waiting thread: SIGHUP re-reads the cluster file,
  // SIGINT/SIGTERM stop the server cleanly.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  ASSIGN_OR_RETURN(auto server, Server::Start(a.o));
  Server* sp = server.get();
  std::atomic<bool> done{false};
  std::thread waiter([sp, set, &done] {
    while (!done) {
      int sig = 0;
      if (sigwait(&set, &sig) != 0) continue;
      if (sig == SIGHUP && !done) {
        ServeLog(LogLevel::kInfo, "SIGHUP: re-reading the cluster file");
        sp->Reload();
        continue;
      }
      break;
    }
    sp->Shutdown();
  });
  server->Wait();
  done = true;
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return Status::Ok();
}

struct RemoteArgs {
  std::string server, input, output, csv;
  int64_t random_seed = 1, timeout_ms = 60000;
  int requests = 1, concurrency = 1;
  double interval_ms = 0;
  bool status = false, json = false;
  TlsPaths tls;
};

void PrintStatus(const rpc::ServeStatusReply& s) {
  std::cout << "model " << s.model() << ", generation " << s.generation()
            << " (" << s.strategy() << "): " << s.accepted() << " accepted, "
            << s.answered() << " answered, " << s.failed() << " failed, "
            << s.retried() << " retried, " << s.in_flight() << " in flight; "
            << (s.latency_ms_p50() > 0
                    ? "median latency " + HumanMs(s.latency_ms_p50())
                    : std::string("none answered"))
            << " in the last monitoring window\n"
            << std::fixed;
  std::cout << "  device        state     share  predicted  measured  queue  "
               "busy\n";
  for (const auto& d : s.devices()) {
    std::cout << "  " << std::left << std::setw(13) << d.name() << " "
              << std::setw(8) << d.state() << std::right << std::setw(7)
              << std::setprecision(2) << d.share() << std::setw(9)
              << std::setprecision(1) << d.predicted_ms() << "ms"
              << std::setw(8) << d.measured_ms() << "ms" << std::setw(7)
              << d.queue_mean() << std::setw(5) << std::setprecision(0)
              << 100 * d.utilisation() << "%\n";
  }
  for (const auto& r : s.replans()) {
    std::cout << "  generation " << r.generation() << " (" << r.strategy()
              << ", switch " << std::setprecision(0) << r.switch_ms()
              << " ms): " << r.reason() << "\n";
  }
}

// Inside a quoted CSV field a quote is written twice.
std::string CsvQuoted(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out;
}

// One request of infer-remote: when it was sent, and its answer.
struct Row {
  double start_ms = 0;
  StatusOr<InferResult> r = Internal("not sent");
};

// Requests in flight at most, as `shoal bench` allows: each has a client
// thread.
constexpr int kMaxRemoteConcurrency = 1024;

// The requests, `concurrency` in flight, or an open-loop stream at a
// steady rate with --interval-ms.
std::vector<Row> SendRemote(const RemoteArgs& a, ServeClient* client,
                            const Tensor& input) {
  std::vector<Row> rows(a.requests);
  std::atomic<int> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (int i; (i = next++) < a.requests;) {
      if (a.interval_ms > 0) {
        std::this_thread::sleep_until(
            t0 + std::chrono::microseconds(int64_t(i * a.interval_ms * 1e3)));
      }
      rows[i].start_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - t0)
                             .count();
      rows[i].r = client->Infer(input, a.timeout_ms,
                                "infer-remote#" + std::to_string(i));
    }
  };
  std::vector<std::thread> threads;
  for (int k = 0; k < a.concurrency; ++k) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  return rows;
}

// --csv: a line per request. The server's request number and a hash of
// the output: a request answered twice, or a wrong answer, shows in the
// file.
Status WriteRemoteCsv(const std::string& path, const std::vector<Row>& rows) {
  std::ofstream f(path);
  f << "request,start_ms,latency_ms,server_ms,generation,attempts,"
       "server_request,output_hash,ok,error\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i].r;
    f << i << "," << rows[i].start_ms << "," << (r.ok() ? r->latency_ms : 0)
      << "," << (r.ok() ? r->server_ms : 0) << ","
      << (r.ok() ? r->generation : 0) << "," << (r.ok() ? r->attempts : 0)
      << "," << (r.ok() ? r->request : -1) << ","
      << (r.ok() ? HashTensor(r->output).substr(0, 16) : "") << "," << r.ok()
      << ",\"" << (r.ok() ? "" : CsvQuoted(r.status().message())) << "\"\n";
  }
  if (!f) return InvalidArgument("cannot write " + path);
  return Status::Ok();
}

// What the answers add up to.
struct RemoteSummary {
  std::vector<double> lat;
  std::map<int64_t, int> per_gen;  // answered, by plan generation
  int failed = 0, retried = 0;
  Status first_error;
};

RemoteSummary Summarize(const std::vector<Row>& rows) {
  RemoteSummary m;
  for (const auto& row : rows) {
    if (!row.r.ok()) {
      m.failed++;
      if (m.first_error.ok()) m.first_error = row.r.status();
      continue;
    }
    m.lat.push_back(row.r->latency_ms);
    m.per_gen[row.r->generation]++;
    m.retried += row.r->attempts > 1;
  }
  return m;
}

void PrintRemote(const RemoteArgs& a, const std::vector<Row>& rows,
                 const RemoteSummary& m) {
  if (a.json) {
    nlohmann::json j;
    j["requests"] = a.requests;
    j["failed"] = m.failed;
    j["retried"] = m.retried;
    j["latency_ms"] = {
        {"median", Median(m.lat)},
        {"max",
         m.lat.empty() ? 0.0 : *std::max_element(m.lat.begin(), m.lat.end())}};
    nlohmann::json g;
    for (const auto& [gen, n] : m.per_gen) g[std::to_string(gen)] = n;
    j["answered_by_generation"] = g;
    if (rows.back().r.ok()) j["output_shape"] = rows.back().r->output.shape;
    std::cout << j.dump() << std::endl;
  } else if (a.requests == 1 && rows[0].r.ok()) {
    const InferResult& r = *rows[0].r;
    const auto& d = r.output.data;
    const size_t best = std::max_element(d.begin(), d.end()) - d.begin();
    std::cout << "answered by generation " << r.generation << " (attempt "
              << r.attempts << ") in " << HumanMs(r.latency_ms) << " ("
              << HumanMs(r.server_ms) << " in the server); output "
              << ShapeToString(r.output.shape) << ", largest value "
              << std::setprecision(4) << d[best] << " at index " << best
              << "\n";
  } else if (!m.lat.empty()) {
    std::cout << a.requests - m.failed << " of " << a.requests
              << " requests answered (" << m.retried
              << " after one retry); latency median " << HumanMs(Median(m.lat))
              << "; by generation:";
    for (const auto& [gen, n] : m.per_gen) {
      std::cout << " " << gen << ": " << n;
    }
    std::cout << "\n";
  }
}

Status RunRemote(const RemoteArgs& a) {
  if (a.requests < 1 || a.concurrency < 1 || a.timeout_ms < 1) {
    return InvalidArgument(
        "--requests, --concurrency and --timeout-ms must be >= 1");
  }
  if (a.concurrency > kMaxRemoteConcurrency) {
    return InvalidArgument("--concurrency " + std::to_string(a.concurrency) +
                           " is above the limit of " +
                           std::to_string(kMaxRemoteConcurrency) +
                           " requests in flight (one client thread each)");
  }
  ASSIGN_OR_RETURN(auto tls, LoadTlsFlags(a.tls));
  ServeClient client(a.server, 0, tls.get());
  if (a.status) {
    ASSIGN_OR_RETURN(auto s, client.GetStatus(a.timeout_ms));
    if (a.json) {
      std::cout << StatusJson(s).dump(2) << std::endl;
    } else {
      PrintStatus(s);
    }
    return Status::Ok();
  }
  Tensor input;
  if (!a.input.empty()) {
    ASSIGN_OR_RETURN(input, ReadNpy(a.input));
  } else {
    ASSIGN_OR_RETURN(auto s, client.GetStatus(a.timeout_ms));
    input = RandomInput(Shape(s.input_shape().begin(), s.input_shape().end()),
                        a.random_seed);
  }
  const std::vector<Row> rows = SendRemote(a, &client, input);
  const RemoteSummary m = Summarize(rows);
  if (!a.csv.empty()) RETURN_IF_ERROR(WriteRemoteCsv(a.csv, rows));
  if (!a.output.empty() && rows.back().r.ok()) {
    RETURN_IF_ERROR(WriteNpy(a.output, rows.back().r->output));
  }
  PrintRemote(a, rows, m);
  if (m.failed > 0) {
    return m.first_error.WithContext(std::to_string(m.failed) + " of " +
                                     std::to_string(a.requests) +
                                     " requests failed; the first");
  }
  return Status::Ok();
}

// When the server judges the devices and re-plans.
void AddMonitorFlags(CLI::App* cmd, ServeArgs* a) {
  cmd->add_option("--monitor-interval", a->o.monitor_interval_s,
                  "Seconds between monitoring ticks (default 1)");
  cmd->add_option("--window", a->o.window_ticks,
                  "Ticks of statistics judged together (default 4)");
  cmd->add_option("--min-samples", a->o.min_samples,
                  "Runs per task before a device is judged (default 3)");
  cmd->add_option("--imbalance", a->o.imbalance,
                  "Re-plan when a device's measured/predicted compute is off "
                  "the others' by this factor (default 1.5)");
  cmd->add_option("--min-gain", a->o.min_gain,
                  "Deploy a new plan only if it predicts this fraction less "
                  "on the busiest device (default 0.1)");
  cmd->add_option("--cooldown", a->o.cooldown_s,
                  "Seconds between re-plans for speed (default 5)");
  cmd->add_option("--watch", a->o.watch_s,
                  "Re-read the cluster file every this many seconds (default "
                  "0: only on SIGHUP)");
  cmd->add_option("--discover", a->o.discover_s,
                  "Browse DNS-SD (_shoal._tcp) every this many seconds for "
                  "workers that announce themselves: each that answers "
                  "joins beside the cluster file's devices, and leaves when "
                  "it stops announcing; --cluster is then optional (default "
                  "0: never)");
}

// The settings of --config FILE that no flag on the command line gave,
// each through its flag's own option: the same conversion and checks as
// on the command line.
Status ApplyServeConfig(CLI::App* cmd, const std::string& path) {
  ASSIGN_OR_RETURN(ServeSettings file, LoadServeConfig(path));
  for (const auto& [flag, value] : file) {
    CLI::Option* opt = cmd->get_option_no_throw(flag);
    if (opt == nullptr) {
      return Internal("--config " + path + ": serve has no flag " + flag);
    }
    if (opt->count() > 0) continue;  // the command line wins
    try {
      opt->add_result(value);
      opt->run_callback();
    } catch (const CLI::Error& e) {
      return InvalidArgument(path + ": " + flag.substr(2) + ": " + e.what());
    }
  }
  return Status::Ok();
}

void AddServeSubcommand(CLI::App* app) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* cmd = app->add_subcommand(
      "serve",
      "Serve a model on a cluster: answer inference requests over gRPC, "
      "monitor the devices and re-plan when one slows, leaves or joins");
  cmd->add_option("--cluster", a->o.cluster_file,
                  "Cluster file (YAML; required, here or in --config, unless "
                  "--discover finds the devices)");
  cmd->add_option("--model", a->o.model.spec,
                  "Zoo name or .onnx file (required, here or in --config)");
  cmd->add_option("--input-shape", a->input_shape, "Override the input shape");
  cmd->add_option("--weights-seed", a->o.model.weights_seed,
                  "Seed of a zoo model's random weights (default 0)");
  cmd->add_option("--listen", a->o.listen,
                  "HOST:PORT of the Inference service (default "
                  "127.0.0.1:7600; port 0: any free port)");
  cmd->add_option("--advertise", a->o.advertise,
                  "HOST the workers send results to (a port is chosen per "
                  "plan; default: this machine's address on its route to the "
                  "first device)");
  cmd->add_option("--strategy", a->o.strategy,
                  "Planning strategy (default auto when available, else "
                  "pipeline)");
  cmd->add_option("--objective", a->objective,
                  "auto: minimise latency or maximise throughput (default "
                  "latency)")
      ->check(CLI::IsMember({"latency", "throughput"}));
  cmd->add_option("--concurrency", a->o.concurrency,
                  "auto, throughput: requests in flight the plan is judged "
                  "at (default: one per device)");
  cmd->add_option("--time-limit", a->o.time_limit_s,
                  "auto: seconds for the MILP (default 10)");
  AddMonitorFlags(cmd, a.get());
  cmd->add_option("--timeout-ms", a->o.timeout_ms,
                  "Deadline of one request in the server (default 30000; a "
                  "client's sooner deadline wins)");
  cmd->add_option("--max-in-flight", a->o.max_in_flight,
                  "Requests in flight at most; more are refused at once "
                  "(default 1024)");
  cmd->add_option("--max-message", a->max_message,
                  "Largest gRPC message (default 256MiB)");
  cmd->add_option("--log-every", a->o.log_every_s,
                  "Seconds between summary lines (default 5)");
  cmd->add_option("--log-format", a->log_format,
                  "text: a line per event, 'TIME LEVEL serve: message'; "
                  "json: a JSON object per line (ts, level, msg and the "
                  "event's fields) (default text)")
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--metrics", a->o.metrics_listen,
                  "HOST:PORT to serve Prometheus metrics on (GET /metrics; "
                  "default: none)");
  cmd->add_option("--dashboard", a->o.dashboard_listen,
                  "HOST:PORT to serve the web dashboard on (default: none)");
  cmd->add_option("--http", a->o.http_listen,
                  "HOST:PORT of the HTTP inference API: KServe v2 and POST "
                  "/v1/models/NAME/classify (default: none)");
  cmd->add_option("--http-max-body", a->http_max_body,
                  "Largest request body the HTTP API reads (default 16MiB)");
  cmd->add_option("--http-token-file", a->o.http_token_file,
                  "File holding a bearer token every HTTP endpoint then "
                  "requires (default: none)");
  cmd->add_flag("--no-rebalance", a->no_rebalance,
                "Monitor and log, but re-plan only when devices leave or join");
  cmd->add_option("--config", a->config,
                  "YAML file of settings, each key a flag above without its "
                  "dashes (cluster, model, listen, http, log-format, ...); "
                  "flags given override it (docs/serve.md)");
  cmd->callback([a, cmd] {
    Status s = Status::Ok();
    if (!a->config.empty()) s = ApplyServeConfig(cmd, a->config);
    if (s.ok()) s = RunServe(*a);
    throw CommandExit(ReportStatus(s));
  });
}

void AddInferRemoteCommand(CLI::App* app) {
  auto r = std::make_shared<RemoteArgs>();
  CLI::App* rc = app->add_subcommand(
      "infer-remote", "Send inference requests to a `shoal serve` server");
  rc->add_option("--server", r->server, "HOST:PORT of shoal serve")->required();
  AddTlsOptions(rc, &r->tls, "client (a coordinator certificate)");
  rc->add_option("--input", r->input, "Input tensor (.npy, float32)");
  rc->add_option("--input-seed", r->random_seed,
                 "Seeded normal random input when no --input (default 1)");
  rc->add_option("--output", r->output, "Write the (last) output as .npy");
  rc->add_option("--requests", r->requests, "Requests to send (default 1)");
  rc->add_option("--concurrency", r->concurrency,
                 "Requests in flight at once (default 1, at most 1024)");
  rc->add_option("--interval-ms", r->interval_ms,
                 "Start request i at i x this (a steady stream; default 0: "
                 "as fast as answers come)");
  rc->add_option("--timeout-ms", r->timeout_ms,
                 "Deadline of each call (default 60000)");
  rc->add_option("--csv", r->csv,
                 "Write one line per request: start, latency, generation, "
                 "attempts, the server's request number, a hash of the "
                 "output, error");
  rc->add_flag("--status", r->status,
               "Print the server's status (devices, re-plans) instead");
  rc->add_flag("--json", r->json, "Print JSON");
  rc->callback([r] { throw CommandExit(ReportStatus(RunRemote(*r))); });
}

}  // namespace

void AddServeCommand(CLI::App* app) {
  AddServeSubcommand(app);
  AddInferRemoteCommand(app);
}

}  // namespace shoal
