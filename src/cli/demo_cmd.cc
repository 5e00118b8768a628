// `shoal demo` (what `make demo` runs): brings up an emulated cluster of
// Raspberry Pi 3B+ boards on free ports, runs one model on one device,
// as a pipeline, with every exact model-parallel strategy (the fastest is
// the best exact Plan) and as LCP branches, checks each output against the
// single-device run, prints one table, and always shuts the cluster down.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "cli/bench_report.h"
#include "cli/commands.h"
#include "cli/plan_common.h"
#include "cluster/slow_link.h"
#include "emulate/emulated_cluster.h"
#include "engine/run_whole.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "partition/strategy.h"
#include "plan/plan_cost.h"
#include "plan/plan_verify.h"
#include "runtime/coordinator.h"
#include "sim/board_fit.h"
#include "sim/latency_model.h"
#include "util/net_address.h"
#include "util/stats.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

struct DemoArgs {
  std::string model = "alexnet";
  std::string cluster;  // empty: the embedded Pi 3B+ cluster
  int devices = 4;
  int requests = 3;
  int branches = 4;
  std::string strategies = "auto,lop,lip,channel,filter,spatial,fuse,fuse-ilp";
  int64_t timeout_ms = 120000;
};

constexpr double kTolerance = 1e-4;

// One device of examples/pi3-4.yaml: a Raspberry Pi 3B+ computing as fast
// as ncnn runs one, on 2.4 GHz Wi-Fi (docs/cluster-format.md).
std::string PiDevice(int i, int port) {
  std::ostringstream o;
  o << "  - {name: pi" << i << ", address: 127.0.0.1:" << port
    << ", board: pi3b+}\n";
  return o.str();
}

// The embedded cluster: N Raspberry Pi 3B+ boards on ports free right now, in a
// fresh directory, so it cannot meet a cluster someone left running.
StatusOr<std::string> WriteEmbeddedCluster(int n, std::string* dir) {
  std::string templ = "/tmp/shoal-demo-XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return Unavailable("cannot create a directory under /tmp");
  }
  *dir = templ;
  std::string yaml =
      "# shoal demo: Raspberry Pi 3B+ boards (as examples/pi3-4.yaml) on "
      "free ports\ndevices:\n";
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(int port, FreeLoopbackPort());
    yaml += PiDevice(i, port);
  }
  const std::string file = templ + "/cluster.yaml";
  std::ofstream(file) << yaml;
  return file;
}

// Stops the cluster once: on the normal path, on an error return, or from
// the signal thread on Ctrl-C.
class ClusterGuard {
 public:
  // `dir`: a temporary directory holding the file, removed after.
  ClusterGuard(std::string file, std::string dir)
      : file_(std::move(file)), dir_(std::move(dir)) {}
  ~ClusterGuard() { Stop(); }
  void Stop() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!armed_) return;
    armed_ = false;
    std::ostringstream quiet;
    Status s = ClusterDown(file_, quiet, /*purge=*/true);
    std::cout << "cluster down: "
              << (s.ok() ? "every worker stopped" : s.message()) << std::endl;
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  void Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
  }

 private:
  std::string file_, dir_;
  std::mutex mu_;
  bool armed_ = false;
};

// Waits for SIGINT/SIGTERM/SIGHUP (blocked in every thread) and stops the
// cluster before exiting.
class SignalWatcher {
 public:
  explicit SignalWatcher(ClusterGuard* guard) {
    sigemptyset(&set_);
    sigaddset(&set_, SIGINT);
    sigaddset(&set_, SIGTERM);
    sigaddset(&set_, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &set_, &old_);
    thread_ = std::thread([this, guard] {
      int sig = 0;
      sigwait(&set_, &sig);
      if (finished_) return;
      std::cout << "\ninterrupted (signal " << sig << "): stopping the cluster"
                << std::endl;
      guard->Stop();
      std::_Exit(128 + sig);
    });
  }
  ~SignalWatcher() {
    finished_ = true;
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }

 private:
  sigset_t set_, old_;
  std::atomic<bool> finished_{false};
  std::thread thread_;
};

struct Row {
  std::string label, strategy, note;
  int devices = 0;
  double latency_ms = 0;
  double throughput_rps = 0;  // with as many requests in flight as devices
  int64_t bytes = 0;
  std::vector<int64_t> weight_bytes;
  double rel_diff = -1;  // < 0: not checked
  bool ok = false;       // ran
  bool exact = true;     // compared with the original model
};

// Plans, deploys and times one configuration on the cluster.
Row RunConfig(const std::string& label, const std::string& strategy,
              const Model& m, const ModelRef& ref,
              const std::vector<PlanDevice>& devices, const Cluster& cluster,
              const Tensor& x, const Tensor& want, const DemoArgs& a) {
  Row r;
  r.label = label;
  r.strategy = strategy;
  r.devices = static_cast<int>(devices.size());
  std::cout << "  " << std::left << std::setw(22) << label << std::right
            << std::flush;
  auto fail = [&](const Status& s) {
    r.note = s.message();
    std::cout << " not run: " << r.note << std::endl;
    return r;
  };
  PlanOptions po;
  po.strategy = strategy;
  po.devices = devices;
  po.model = ref;
  // Planned as `shoal plan --cluster` plans: priced on the cluster's
  // links (auto), LZ4 on its slow links.
  if (devices.size() == cluster.devices.size()) {
    po.latency =
        std::make_shared<LatencyModel>(LatencyModel::FromCluster(cluster));
    po.wire.lz4 = HasSlowLink(cluster);
    po.link_rates = cluster.UplinkRates();
    po.link_latency_s = cluster.MaxLinkLatency();
  }
  auto p = MakePlan(m.graph, po);
  if (!p.ok()) return fail(p.status());
  if (Status s = CheckPlanMemory(*p, m.graph); !s.ok()) return fail(s);
  CoordinatorOptions co;
  co.timeout_ms = a.timeout_ms;
  auto coord = Coordinator::Create(*p, cluster, co);
  if (!coord.ok()) return fail(coord.status());
  DeployReport dep;
  if (Status s = (*coord)->Deploy(m.weights, &dep); !s.ok()) return fail(s);
  r.weight_bytes = dep.weight_bytes;
  Tensor out;
  // One warm-up request: first-touch costs are not the steady state.
  if (Status s = (*coord)->Run(x, &out, nullptr, 0); !s.ok()) return fail(s);
  // Bytes as the workers measured them sending (LZ4 messages at their
  // compressed size), and the coordinator's first hops of the input.
  if (Status s = (*coord)->Stats(/*reset=*/true).status(); !s.ok()) {
    return fail(s);
  }
  std::vector<double> lat;
  std::vector<int64_t> sent(p->devices.size(), 0), received = sent;
  for (int i = 0; i < a.requests; ++i) {
    RunStats st;
    if (Status s = (*coord)->Run(x, &out, &st, i + 1); !s.ok()) return fail(s);
    lat.push_back(st.latency_ms);
    AddCoordinatorBytes(*p, i + 1, &sent, &received);
    r.rel_diff = std::max(r.rel_diff, MaxRelDiff(out, want));
  }
  auto ds = (*coord)->Stats(/*reset=*/false);
  if (!ds.ok()) return fail(ds.status());
  for (const auto& d : *ds) sent[0] += d.bytes_sent;
  int64_t total = 0;
  for (int64_t b : sent) total += b;
  r.bytes = a.requests > 0 ? total / a.requests : 0;
  r.latency_ms = Median(lat);
  // Throughput with as many requests in flight as devices: what a
  // pipeline is for (its stages work on different requests at once), and
  // the rate a stream of camera frames would see from any plan.
  const int in_flight = static_cast<int>(devices.size());
  const int n = std::max(a.requests, 2 * in_flight);
  std::atomic<int> next{0};
  std::mutex mu;
  Status failed;
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> clients;
  for (int k = 0; k < in_flight; ++k) {
    clients.emplace_back([&] {
      for (int i; (i = next++) < n;) {
        Tensor o;
        Status s = (*coord)->Run(x, &o, nullptr, a.requests + 1 + i);
        if (s.ok()) {
          const double diff = MaxRelDiff(o, want);
          std::lock_guard<std::mutex> lock(mu);
          r.rel_diff = std::max(r.rel_diff, diff);
          continue;
        }
        std::lock_guard<std::mutex> lock(mu);
        if (failed.ok()) failed = s;
        next = n;  // the rest would fail the same way
      }
    });
  }
  for (auto& c : clients) c.join();
  if (!failed.ok()) return fail(failed);
  r.throughput_rps =
      n / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
  r.ok = true;
  std::cout << std::fixed << std::setprecision(0) << std::setw(8)
            << r.latency_ms << " ms (median of " << a.requests << "), "
            << std::setprecision(2) << r.throughput_rps << " req/s ("
            << in_flight << " in flight), deployed in " << std::setprecision(0)
            << dep.ms << " ms" << std::endl;
  return r;
}

std::string Mib(int64_t b) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(b >= (int64_t{10} << 20) ? 0 : 1)
    << b / 1048576.0;
  return o.str();
}

void PrintTable(const std::vector<Row>& rows, double base_ms, double base_rps,
                const std::string& best) {
  std::cout << "\n"
            << std::left << std::setw(26) << "configuration" << std::right
            << std::setw(4) << "dev" << std::setw(12) << "latency ms"
            << std::setw(9) << "speedup" << std::setw(8) << "req/s"
            << std::setw(9) << "speedup" << std::setw(14) << "wire KiB/req"
            << "  " << std::left << std::setw(27) << "weights MiB per device"
            << "check\n"
            << std::string(123, '-') << "\n";
  for (const auto& r : rows) {
    std::string label = r.label + (r.strategy == best ? " (best)" : "");
    std::cout << std::left << std::setw(26) << label << std::right
              << std::setw(4) << r.devices;
    if (!r.ok) {
      std::cout << "  not run: " << r.note << "\n";
      continue;
    }
    std::string w;
    for (size_t d = 0; d < r.weight_bytes.size(); ++d) {
      w += (d ? "/" : "") + Mib(r.weight_bytes[d]);
    }
    std::ostringstream check;
    check << std::scientific << std::setprecision(1) << "max rel diff "
          << r.rel_diff << (r.rel_diff <= kTolerance ? " ok" : " ABOVE 1e-4");
    std::cout << std::fixed << std::setprecision(0) << std::setw(12)
              << r.latency_ms << std::setprecision(2) << std::setw(8)
              << base_ms / r.latency_ms << "x" << std::setw(8)
              << r.throughput_rps << std::setw(8) << r.throughput_rps / base_rps
              << "x" << std::setprecision(1) << std::setw(14)
              << r.bytes / 1024.0 << "  " << std::left << std::setw(26) << w
              << " " << check.str() << std::right << "\n";
  }
}

// A given cluster file must not point at workers that already run: the
// demo deploys its own plans and stops the workers at the end.
Status CheckPortsFree(const std::string& file) {
  ASSIGN_OR_RETURN(Cluster c, LoadCluster(file));
  for (const auto& d : c.devices) {
    const auto colon = d.address.rfind(':');
    if (colon == std::string::npos) continue;
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(std::atoi(d.address.substr(colon + 1).c_str()));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool taken =
        connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0;
    close(fd);
    if (taken) {
      return FailedPrecondition(
          "something already listens on " + d.address + " (device " + d.name +
          " of " + file + "): stop it (shoal cluster down " + file +
          ") or run shoal demo without --cluster, which picks free ports");
    }
  }
  return Status::Ok();
}

// Every configuration's row, in the table's order; `best` is the exact
// strategy of lowest median latency.
StatusOr<std::vector<Row>> RunConfigs(const DemoArgs& a, const Cluster& cluster,
                                      std::string* best) {
  const std::vector<PlanDevice> devices = cluster.PlanDevices();
  ModelRef ref;
  ref.spec = a.model;
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(ref, true));
  const Shape in_shape = m.graph.FindTensor(m.graph.inputs[0])->shape;
  const Tensor x = RandomInput(in_shape, 1);
  ASSIGN_OR_RETURN(Tensor want, RunWhole(m, x));

  std::cout << "\nrunning (" << a.requests
            << " timed requests after one warm-up each; outputs checked "
               "against "
            << a.model << " run whole in this process):\n";
  std::vector<Row> rows;
  rows.push_back(RunConfig("one device (" + devices[0].name + ")", "pipeline",
                           m, ref, {devices[0]}, cluster, x, want, a));
  rows.back().strategy = "one device";
  if (!rows.back().ok) {
    return Unavailable("the single-device run failed: " + rows.back().note);
  }
  rows.push_back(
      RunConfig("pipeline", "pipeline", m, ref, devices, cluster, x, want, a));
  std::stringstream ss(a.strategies);
  double best_ms = INFINITY;
  for (std::string s; std::getline(ss, s, ',');) {
    rows.push_back(RunConfig(s, s, m, ref, devices, cluster, x, want, a));
    if (rows.back().ok && rows.back().rel_diff <= kTolerance &&
        rows.back().latency_ms < best_ms) {
      best_ms = rows.back().latency_ms;
      *best = s;
    }
  }
  // LCP changes the model: checked against the branched model on one device.
  ModelRef lref = ref;
  lref.lcp_branches = a.branches;
  const std::string lcp_label = "lcp split" + std::to_string(a.branches);
  auto lm = LoadPlanModel(lref, true);
  if (lm.ok()) {
    ASSIGN_OR_RETURN(Tensor lwant, RunWhole(*lm, x));
    rows.push_back(
        RunConfig(lcp_label, "lcp", *lm, lref, devices, cluster, x, lwant, a));
    rows.back().exact = false;
  } else {
    Row r;
    r.label = lcp_label;
    r.devices = a.devices;
    r.note = lm.status().message();
    rows.push_back(r);
  }
  return rows;
}

// What a user would run instead: one board of the cluster's class with
// ncnn, its published time for the model (sim/board_fit.h), beside the
// best exact plan. Nothing when the devices are not all one class or ncnn
// publishes no figure for the model on it.
void PrintPublishedBaseline(const Cluster& c, const DemoArgs& a,
                            const std::vector<Row>& rows,
                            const std::string& best) {
  const BoardClass* b = c.devices.front().board;
  for (const auto& d : c.devices) {
    if (d.board != b || d.board_speed != 1) return;
  }
  if (b == nullptr) return;
  double ncnn = 0;
  for (const auto& t : PublishedFor(b->name)) {
    if (t.model == a.model) ncnn = t.ms;
  }
  if (ncnn <= 0) return;
  std::cout << "\none " << b->title
            << " running ncnn (published, 4 threads): " << std::fixed
            << std::setprecision(0) << ncnn << " ms";
  for (const auto& r : rows) {
    if (r.ok && r.strategy == best) {
      std::cout << "; the best exact plan here, " << r.latency_ms
                << " ms: " << std::setprecision(2) << ncnn / r.latency_ms
                << "x that board";
    }
  }
  std::cout << "\n";
}

void PrintLegend(const DemoArgs& a, const std::string& best) {
  const std::string lcp_label = "lcp split" + std::to_string(a.branches);
  std::cout << "\nlatency: median request time on the emulated devices, in "
               "board time (each device a board of its class, computing as "
               "fast as ncnn runs one: Raspberry Pi 3B+s on 62 Mbit/s + 9 ms "
               "links unless --cluster says otherwise), one request at a "
               "time, and its "
               "speedup (one device's latency / latency); req/s: requests "
               "answered per second with as many in flight as the row has "
               "devices (a stream of frames; a pipeline's stages then work "
               "on different requests at once), and its speedup over one "
               "device's; wire: bytes the devices sent per request, as the "
               "workers measured them.\n"
            << "best exact model-parallel Plan: "
            << (best.empty() ? std::string("none ran") : best)
            << ", chosen by running every candidate (" << a.strategies
            << ") and taking the lowest median latency.\n"
            << lcp_label << " is another model (" << a.branches
            << " narrow branches, LCP paper): it is checked against that "
               "branched model run whole, not against "
            << a.model
            << "; its accuracy needs training (shoal lcp train, docs/lcp.md)."
            << "\n";
}

Status RunDemo(const DemoArgs& a) {
  if (a.devices < 2 || a.requests < 1 || a.branches < 1) {
    return InvalidArgument("--devices >= 2, --requests >= 1, --branches >= 1");
  }
  std::cout << "shoal demo: " << a.model << " on an emulated cluster of "
            << (a.cluster.empty()
                    ? std::to_string(a.devices) + " Raspberry Pi 3B+ boards"
                    : a.cluster)
            << ": one device, a pipeline, each exact model-parallel "
               "strategy, and LCP branches\n";
  std::string dir, file = a.cluster;
  if (file.empty()) {
    ASSIGN_OR_RETURN(file, WriteEmbeddedCluster(a.devices, &dir));
  } else {
    RETURN_IF_ERROR(CheckPortsFree(file));
  }
  ClusterGuard guard(file, dir);
  SignalWatcher watcher(&guard);
  ClusterUpOptions uo;
  uo.die_with_parent = true;
  guard.Arm();
  ASSIGN_OR_RETURN(auto up, ClusterUp(file, uo, std::cout));
  bool limited = true;
  for (const auto& d : up) limited &= d.cpu_limited && d.memory_limited;
  if (!limited) {
    std::cout << "NOTE: cgroups could not limit every worker (see above): "
                 "those run at this machine's full speed, so their latencies "
                 "are not a Pi's; links are still shaped by the workers' "
                 "transport and memory budgets still refuse deployments\n";
  }
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(file));
  std::string best;
  ASSIGN_OR_RETURN(const std::vector<Row> rows, RunConfigs(a, cluster, &best));
  guard.Stop();

  PrintTable(rows, rows.front().latency_ms, rows.front().throughput_rps, best);
  PrintLegend(a, best);
  PrintPublishedBaseline(cluster, a, rows, best);
  std::string bad;
  for (const auto& r : rows) {
    if (r.ok && !(r.rel_diff <= kTolerance)) bad += " " + r.label;
  }
  if (!bad.empty()) {
    return Internal(
        "outputs differ from the single-device run by more than "
        "1e-4 (relative):" +
        bad);
  }
  std::cout << "every output matched its single-device run within 1e-4.\n";
  // The workers' logs are only worth keeping when something failed.
  if (!dir.empty()) {
    std::error_code ec;
    fs::remove_all(ClusterStateDir(file), ec);
  }
  return Status::Ok();
}

}  // namespace

void AddDemoCommand(CLI::App* app) {
  auto a = std::make_shared<DemoArgs>();
  auto* cmd = app->add_subcommand("demo",
                                  "Emulated Pi 3B+ cluster: one device vs "
                                  "pipeline vs model-parallel vs LCP");
  cmd->add_option("--model", a->model, "Zoo model (default alexnet)");
  cmd->add_option("--cluster", a->cluster,
                  "Cluster file to start (default: an embedded cluster of "
                  "Raspberry Pi 3B+ boards on free ports)");
  cmd->add_option("--devices", a->devices,
                  "Devices of the embedded cluster (default 4)");
  cmd->add_option("--requests", a->requests,
                  "Timed requests per configuration (default 3)");
  cmd->add_option("--branches", a->branches, "LCP branches (default 4)");
  cmd->add_option("--strategies", a->strategies,
                  "Model-parallel candidates, comma separated (default "
                  "auto,lop,lip,channel,filter,spatial,fuse,fuse-ilp)");
  cmd->add_option("--timeout-ms", a->timeout_ms,
                  "Deadline of each request (default 120000)");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunDemo(*a))); });
}

}  // namespace shoal
