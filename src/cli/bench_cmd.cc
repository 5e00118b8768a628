// `shoal bench --plan plan.json --cluster cluster.yaml --requests N`: N
// requests through the cluster's workers, K in flight; latency percentiles,
// throughput and what each device spent and moved.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>

#include "cli/bench_report.h"
#include "cli/commands.h"
#include "cli/deploy_progress.h"
#include "cli/plan_common.h"
#include "graph/random_input.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "plan/timeline_svg.h"
#include "plan/trace.h"
#include "runtime/coordinator.h"
#include "runtime/random_plan_input.h"
#include "util/stats.h"

namespace shoal {
namespace {

struct BenchArgs {
  std::string plan, cluster, trace, timeline, advertise;
  int requests = 20, concurrency = 1;
  int64_t timeout_ms = 60000;
  double timeline_ms = 0;  // the timeline's axis (0: the request's length)
  bool json = false, tasks = false;
};

// Warm-up: first-touch costs (primitive creation, weight reorders) are not
// the steady state, and each replica pays them on its first request, so
// requests until every replica of every task has run once (a device listed
// several times in a deal by speed needs its first turn only).
int64_t WarmUpRequests(const Plan& p) {
  int64_t warm = 1;
  for (const auto& t : p.tasks) {
    for (int d : t.Replicas()) {
      const auto first = std::find(t.devices.begin(), t.devices.end(), d);
      warm = std::max<int64_t>(warm, first - t.devices.begin() + 1);
    }
  }
  return warm;
}

// What the timed requests gave, in the order they ended.
struct Measured {
  std::vector<double> lat;
  std::vector<int64_t> ok_seqs;
  std::vector<TraceSpan> spans;  // the requests, for --trace
  Status first_error;
  int failed = 0, finished = 0;
  double wall_s = 0;
  double dilation = 1;
};

// Requests in flight at most: each has a client thread, and a coordinator
// holds each one's tensors (40 000 aborted the process, out of threads).
constexpr int kMaxBenchConcurrency = 1024;

// The requests, `concurrency` in flight. The first failed request stops
// the run: a lost device fails every later request too, and the report of
// those done is what is worth having.
Measured SendRequests(Coordinator* coord, const Tensor& input,
                      const BenchArgs& a) {
  std::atomic<int> next{0}, finished{0};
  std::atomic<bool> stop{false};
  std::mutex mu;
  Measured m;
  const auto t0 = std::chrono::steady_clock::now();
  auto client = [&] {
    for (int i; !stop && (i = next++) < a.requests;) {
      Tensor out;
      RunStats s;
      // Board time on a dilated emulated cluster (Coordinator::dilation).
      const double k = coord->dilation();
      const double sent = SteadySeconds() / k;
      Status st = coord->Run(input, &out, &s, i + 1);
      const double answered = SteadySeconds() / k;
      std::lock_guard<std::mutex> lock(mu);
      m.spans.push_back(
          {TraceSpan::Kind::kRequest, -1, i + 1, -1, sent, sent, answered});
      if (st.ok()) {
        m.lat.push_back(s.latency_ms);
        m.ok_seqs.push_back(i + 1);
      } else {
        m.failed++;
        if (m.first_error.ok()) m.first_error = st;
        stop = true;
      }
      finished++;
    }
  };
  // A client thread per request in flight, never more than the requests;
  // --concurrency is bounded (kMaxBenchConcurrency) before this.
  std::vector<std::thread> clients;
  for (int k = 0; k < std::min(a.concurrency, a.requests); ++k) {
    try {
      clients.emplace_back(client);
    } catch (const std::system_error& e) {
      std::lock_guard<std::mutex> lock(mu);
      m.first_error = ResourceExhausted(
          "cannot start client thread " + std::to_string(k + 1) + " of " +
          std::to_string(a.concurrency) + ": " + e.what());
      stop = true;
      break;
    }
  }
  ProgressBar bar("requests", a.requests, ProgressBar::Unit::kCount);
  while (finished < a.requests && !stop) {
    bar.Update(finished);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& c : clients) c.join();
  bar.Finish();
  m.finished = finished;
  m.wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count() /
      coord->dilation();
  m.dilation = coord->dilation();
  return m;
}

// One device's row: its compute per request is the sum of its tasks'
// medians; `coord_sent`/`coord_received` are the coordinator's part of its
// traffic (input scatter, output gather), which the worker does not count.
BenchDeviceReport DeviceReport(const DeviceStats& d, const Plan& p,
                               int64_t coord_sent, int64_t coord_received) {
  BenchDeviceReport dr;
  dr.name = d.name;
  dr.error = d.error;
  for (size_t t = 0; t < d.task_compute_ms.size(); ++t) {
    const auto& runs = d.task_compute_ms[t];
    if (runs.empty()) continue;
    const double med =
        Quantile(std::vector<double>(runs.begin(), runs.end()), 0.5);
    dr.compute_ms_median += med;
    dr.task_runs += runs.size();
    dr.tasks.push_back({int(t), p.tasks[t].name, int64_t(runs.size()), med});
  }
  dr.busy_ms = d.busy_ms;
  dr.idle_ms = std::max(0.0, d.elapsed_ms - d.busy_ms);
  dr.wait_ms_total = d.wait_ms;
  dr.bytes_sent = d.bytes_sent + coord_sent;
  dr.bytes_received = d.bytes_received + coord_received;
  dr.queue_histogram = d.queue_histogram;
  dr.requests_failed = d.requests_failed;
  dr.messages_received = d.messages_received;
  dr.board_late_tasks = d.board_late_tasks;
  dr.board_late_task_ms = d.board_late_task_ms;
  dr.board_late_messages = d.board_late_messages;
  dr.board_late_message_ms = d.board_late_message_ms;
  return dr;
}

BenchReport MakeReport(const BenchArgs& a, const Plan& p, const Measured& m,
                       const std::vector<DeviceStats>& ds) {
  // Workers count what they send and receive; the coordinator's own part
  // is added so that the bytes equal the plan's counted bytes.
  std::vector<int64_t> coord_sent(ds.size(), 0), coord_received(ds.size(), 0);
  for (int64_t seq : m.ok_seqs) {
    AddCoordinatorBytes(p, seq, &coord_sent, &coord_received);
  }
  BenchReport r;
  r.plan = a.plan;
  r.cluster = a.cluster;
  r.strategy = p.strategy;
  r.model = p.model.spec;
  r.requests = a.requests;
  r.concurrency = a.concurrency;
  r.failed = m.failed;
  r.not_sent = a.requests - m.finished;
  r.latency_ms = m.lat;
  r.wall_s = m.wall_s;
  r.dilation = m.dilation;
  r.print_tasks = a.tasks;
  if (!m.first_error.ok()) r.first_error = m.first_error.message();
  for (size_t i = 0; i < ds.size(); ++i) {
    r.devices.push_back(
        DeviceReport(ds[i], p, coord_sent[i], coord_received[i]));
  }
  return r;
}

// --trace and --timeline: the requests' spans and every device's.
Status WriteSpans(const BenchArgs& a, const Plan& p,
                  const std::vector<DeviceStats>& ds,
                  std::vector<TraceSpan> spans) {
  int64_t dropped = 0;
  for (const auto& d : ds) {
    spans.insert(spans.end(), d.timeline.begin(), d.timeline.end());
    dropped += d.timeline_dropped;
  }
  if (!a.trace.empty()) RETURN_IF_ERROR(WriteTrace(a.trace, p, spans));
  if (!a.timeline.empty()) {
    RETURN_IF_ERROR(WriteTimelineSvg(a.timeline, p, spans,
                                     "measured: " + a.plan + " on " + a.cluster,
                                     a.timeline_ms / 1e3));
  }
  if (dropped > 0) {
    std::cerr << "warning: the workers kept the first spans only; " << dropped
              << " more are not in the trace\n";
  }
  return Status::Ok();
}

Status RunBench(const BenchArgs& a) {
  if (a.requests < 1 || a.concurrency < 1) {
    return InvalidArgument("--requests and --concurrency must be >= 1");
  }
  if (a.concurrency > kMaxBenchConcurrency) {
    return InvalidArgument("--concurrency " + std::to_string(a.concurrency) +
                           " is above the limit of " +
                           std::to_string(kMaxBenchConcurrency) +
                           " requests in flight (one client thread each)");
  }
  ASSIGN_OR_RETURN(Plan p, LoadPlan(a.plan));
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(p.model, true));
  RETURN_IF_ERROR(VerifyPlanAgainstModel(p, m.graph));
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(a.cluster));
  CoordinatorOptions co;
  co.timeout_ms = a.timeout_ms;
  co.advertise = a.advertise;
  const Tensor input = RandomPlanInput(p, 1, &co.pixels);
  auto upload = ShowDeployProgress(&co);
  ASSIGN_OR_RETURN(auto coord, Coordinator::Create(p, cluster, co));
  DeployReport dep;
  RETURN_IF_ERROR(coord->Deploy(m.weights, &dep));
  upload->Finish();
  for (int64_t seq = 0, warm = WarmUpRequests(p); seq < warm; ++seq) {
    Tensor out;
    RETURN_IF_ERROR(
        coord->Run(input, &out, nullptr, seq).WithContext("warm-up"));
  }
  RETURN_IF_ERROR(coord->Stats(/*reset=*/true).status());

  const Measured got = SendRequests(coord.get(), input, a);
  if (got.lat.empty()) {
    return got.first_error.WithContext(
        "bench stopped at the first request, which failed");
  }
  const bool want_spans = !a.trace.empty() || !a.timeline.empty();
  // After a failure the devices that still answer report; the lost one is
  // listed without statistics.
  ASSIGN_OR_RETURN(auto ds, coord->Stats(false, want_spans,
                                         /*skip_lost=*/got.failed > 0));
  BenchReport r = MakeReport(a, p, got, ds);
  SetDevicePower(p, cluster, &r);
  if (a.json) {
    std::cout << BenchReportJson(r).dump(1) << "\n";
  } else {
    PrintBenchReport(r, std::cout);
  }
  // The trace after the report: a trace file that cannot be written fails
  // the command without losing the measurement.
  const Status traced =
      want_spans ? WriteSpans(a, p, ds, got.spans) : Status::Ok();
  if (got.failed) {
    // The requests' error is the exit status; the trace's is not lost.
    if (!traced.ok()) std::cerr << "shoal: error: " << traced.message() << "\n";
    return got.first_error.WithContext(
        "bench stopped at the first failure (" +
        std::to_string(got.lat.size()) + " requests answered, " +
        std::to_string(got.failed) + " failed, " + std::to_string(r.not_sent) +
        " not sent)");
  }
  return traced;
}

}  // namespace

void AddBenchCommand(CLI::App* app) {
  auto a = std::make_shared<BenchArgs>();
  CLI::App* cmd = app->add_subcommand(
      "bench", "Send N requests through a cluster and report latency");
  cmd->add_option("--plan", a->plan, "Plan file (JSON)")->required();
  cmd->add_option("--cluster", a->cluster, "Cluster file (YAML)")->required();
  cmd->add_option("--requests", a->requests, "Requests (default 20)");
  cmd->add_option("--concurrency", a->concurrency,
                  "Requests in flight at once (default 1)");
  cmd->add_option("--timeout-ms", a->timeout_ms,
                  "Deadline of each request (default 60000)");
  AddAdvertiseOption(cmd, &a->advertise);
  cmd->add_flag("--tasks", a->tasks,
                "List each task's median compute under its device");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--trace", a->trace,
                  "Write each request's spans on every device (task runs, "
                  "messages) to this file, Chrome trace-event JSON");
  cmd->add_option("--timeline", a->timeline,
                  "Draw the request of median latency as an SVG Gantt chart "
                  "(per device: compute, waits, messages) in this file");
  cmd->add_option("--timeline-ms", a->timeline_ms,
                  "Draw the timeline's time axis to this many ms (or to the "
                  "request's end if later): give shoal simulate --timeline "
                  "the same, and the two share one axis side by side "
                  "(default: the request's length)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([a] { throw CommandExit(ReportStatus(RunBench(*a))); });
}

}  // namespace shoal
