// `shoal simulate --plan plan.json --cluster cluster.yaml [--profile p.json]`:
// what `shoal bench` would measure, predicted by a discrete-event simulation
// (src/sim/simulator.h), printed the way `shoal bench` prints.
#include <chrono>
#include <iostream>

#include "cli/bench_report.h"
#include "cli/commands.h"
#include "cli/prediction_source.h"
#include "partition/plan_model.h"
#include "plan/plan_json.h"
#include "plan/timeline_svg.h"
#include "sim/latency_bound.h"
#include "sim/simulator.h"
#include "util/stats.h"

namespace shoal {
namespace {

struct SimulateArgs {
  std::string plan, cluster, profile, trace, timeline;
  int requests = 20, concurrency = 1;
  double timeline_ms = 0;  // the timeline's axis (0: the request's length)
  bool json = false, no_cpu_quota = false, tasks = false;
  uint64_t seed = 1;
};

// What no plan of the model on these devices can beat (sim/latency_bound.h)
// and how far this plan's median is from it.
StatusOr<nlohmann::json> BoundOf(const Plan& p, const LatencyModel& m,
                                 const std::vector<double>& latency_ms) {
  ASSIGN_OR_RETURN(Model model, LoadPlanModel(p.model, false));
  ASSIGN_OR_RETURN(LatencyBound b, LeastLatency(m, model.graph));
  const double median = Quantile(latency_ms, 0.5);
  const auto& devs = m.cluster().devices;
  return nlohmann::json{{"bound_ms", b.total_s() * 1e3},
                        {"shared_ms", b.shared_s * 1e3},
                        {"compute_ms", b.compute_s * 1e3},
                        {"chain_ms", b.chain_s * 1e3},
                        {"chain_fixed_ms", b.chain_fixed_s * 1e3},
                        {"chain_steps", b.chain_steps},
                        {"chain_message_ms", b.chain_message_s * 1e3},
                        {"input_device", devs.at(b.input_device).name},
                        {"input_latency_ms", b.input_latency_s * 1e3},
                        {"one_device_ms", b.one_device_s * 1e3},
                        {"fastest_device", devs.at(b.fastest_device).name},
                        {"median_over_bound", median / (b.total_s() * 1e3)},
                        {"median_minus_bound_ms", median - b.total_s() * 1e3}};
}

void PrintBound(const nlohmann::json& b, int devices, std::ostream& out) {
  char line[1024];
  std::snprintf(
      line, sizeof(line),
      "bound: no plan on the cluster's %d devices beats %.2f ms; this plan's "
      "median is %.2fx that, %.2f ms more. Shared: %.2f ms (the model's "
      "compute spread over all of them at their rates takes %.2f ms, but "
      "only the input device, best %s, starts at once: the others begin "
      "%.2f ms later, its link's latency, and but for the output device "
      "send their results a link's latency before the end). Chain: %.2f ms "
      "(the heaviest chain of layers one after another, %d of them paying "
      "a step, %.2f ms of fixed costs, each layer's arithmetic spread over "
      "every device, and %.2f ms for the one message a chain leaving its "
      "device sends). The fastest device alone (%s): %.2f ms\n",
      devices, b["bound_ms"].get<double>(),
      b["median_over_bound"].get<double>(),
      b["median_minus_bound_ms"].get<double>(), b["shared_ms"].get<double>(),
      b["compute_ms"].get<double>(),
      b["input_device"].get<std::string>().c_str(),
      b["input_latency_ms"].get<double>(), b["chain_ms"].get<double>(),
      b["chain_steps"].get<int>(), b["chain_fixed_ms"].get<double>(),
      b["chain_message_ms"].get<double>(),
      b["fastest_device"].get<std::string>().c_str(),
      b["one_device_ms"].get<double>());
  out << line;
}

Status RunSimulate(const SimulateArgs& a) {
  if (a.requests < 1 || a.concurrency < 1) {
    return InvalidArgument("--requests and --concurrency must be >= 1");
  }
  const auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(Plan p, LoadPlan(a.plan));
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(a.cluster));
  LatencyModel m = LatencyModel::FromCluster(cluster);
  if (!a.profile.empty()) {
    ASSIGN_OR_RETURN(Profile prof, LoadProfile(a.profile));
    auto pm = LatencyModel::FromProfile(cluster, prof, p.model.spec);
    if (!pm.ok()) return pm.status().WithContext(a.profile);
    m = std::move(pm).value();
  }
  SimOptions so;
  so.requests = a.requests;
  so.concurrency = a.concurrency;
  so.cpu_quota = !a.no_cpu_quota;
  so.seed = a.seed;
  so.trace = !a.trace.empty() || !a.timeline.empty();
  ASSIGN_OR_RETURN(SimResult res, Simulate(p, m, so));
  if (!a.trace.empty()) RETURN_IF_ERROR(WriteTrace(a.trace, p, res.spans));
  if (!a.timeline.empty()) {
    RETURN_IF_ERROR(
        WriteTimelineSvg(a.timeline, p, res.spans,
                         "predicted: " + a.plan + " on " + a.cluster +
                             (a.profile.empty() ? "" : " with " + a.profile),
                         a.timeline_ms / 1e3));
  }
  BenchReport r;
  r.plan = a.plan;
  r.cluster = a.cluster;
  r.strategy = p.strategy;
  r.model = p.model.spec;
  r.requests = a.requests;
  r.concurrency = a.concurrency;
  r.latency_ms = res.latency_ms;
  r.wall_s = res.wall_s;
  r.predicted = true;
  r.print_tasks = a.tasks;
  r.source = a.profile.empty() ? SpecSourceOf(cluster) : "profile " + a.profile;
  for (const auto& d : res.devices) {
    BenchDeviceReport dr;
    dr.name = d.name;
    dr.compute_ms_median = d.compute_ms_median;
    dr.busy_ms = d.busy_ms;
    dr.idle_ms = std::max(0.0, d.elapsed_ms - d.busy_ms);
    dr.wait_ms_total = d.wait_ms_total;
    dr.task_runs = d.task_runs;
    dr.bytes_sent = d.bytes_sent;
    dr.bytes_received = d.bytes_received;
    dr.queue_histogram = d.queue_histogram;
    for (const auto& t : d.tasks) {
      dr.tasks.push_back(
          {t.task, p.tasks[t.task].name, t.runs, t.compute_ms_median});
    }
    r.devices.push_back(std::move(dr));
  }
  if (m.cluster().network.shared) {
    r.medium_bps = m.cluster().network.bandwidth_bps;
    r.medium_busy_s = res.medium_busy_s;
  }
  SetDevicePower(p, cluster, &r);
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  // An LCP plan runs another model; its bound is that model's.
  ASSIGN_OR_RETURN(const nlohmann::json bound, BoundOf(p, m, res.latency_ms));
  if (a.json) {
    nlohmann::json j = BenchReportJson(r);
    j["simulation"] = {{"events", res.events}, {"seconds", took}};
    j["bound"] = bound;
    std::cout << j.dump(1) << "\n";
  } else {
    PrintBenchReport(r, std::cout);
    PrintBound(bound, m.num_devices(), std::cout);
    std::cout << "simulated " << res.events << " events in " << took << " s\n";
  }
  return Status::Ok();
}

}  // namespace

void AddSimulateCommand(CLI::App* app) {
  auto a = std::make_shared<SimulateArgs>();
  CLI::App* cmd = app->add_subcommand(
      "simulate",
      "Predict what shoal bench would measure: a discrete-event simulation "
      "of a Plan on a cluster");
  cmd->add_option("--plan", a->plan, "Plan file (JSON)")->required();
  cmd->add_option("--cluster", a->cluster, "Cluster file (YAML)")->required();
  cmd->add_option("--profile", a->profile,
                  "Profile (shoal profile); default: the cluster's specs");
  cmd->add_option("--requests", a->requests, "Requests (default 20)");
  cmd->add_option("--concurrency", a->concurrency,
                  "Requests in flight at once (default 1)");
  cmd->add_flag("--no-cpu-quota", a->no_cpu_quota,
                "Ignore emulated devices' cgroup CPU quota periods (run each "
                "task at its average throttled speed)");
  cmd->add_option("--seed", a->seed,
                  "Draws the phases of the devices' quota periods (default 1)");
  cmd->add_flag("--tasks", a->tasks,
                "List each task's median compute under its device");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--trace", a->trace,
                  "Write each request's predicted spans (task runs, "
                  "messages) to this file, as shoal bench --trace does");
  cmd->add_option("--timeline", a->timeline,
                  "Draw the predicted request of median latency as an SVG "
                  "Gantt chart in this file, as shoal bench --timeline does");
  cmd->add_option("--timeline-ms", a->timeline_ms,
                  "Draw the timeline's time axis to this many ms (or to the "
                  "request's end if later): give shoal bench --timeline the "
                  "same, and the two share one axis side by side (default: "
                  "the request's length)")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([a] { throw CommandExit(ReportStatus(RunSimulate(*a))); });
}

}  // namespace shoal
