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
#include <random>
#include <thread>

#include "cli/commands.h"
#include "cli/plan_common.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "runtime/coordinator.h"

namespace shoal {
namespace {

struct BenchArgs {
  std::string plan, cluster;
  int requests = 20, concurrency = 1;
  int64_t timeout_ms = 60000;
  bool json = false;
};

double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = q * (v.size() - 1);
  const size_t i = static_cast<size_t>(pos);
  if (i + 1 >= v.size()) return v.back();
  return v[i] + (pos - i) * (v[i + 1] - v[i]);
}

void PrintHistogram(const std::vector<double>& lat) {
  constexpr int kBins = 10, kWidth = 40;
  const double lo = *std::min_element(lat.begin(), lat.end());
  const double hi = *std::max_element(lat.begin(), lat.end());
  const double w = hi > lo ? (hi - lo) / kBins : 1;
  std::vector<int> bins(kBins);
  for (double v : lat) bins[std::min(kBins - 1, int((v - lo) / w))]++;
  const int most = *std::max_element(bins.begin(), bins.end());
  std::cout << "latency histogram (ms):\n";
  for (int b = 0; b < kBins; ++b) {
    std::cout << "  " << std::setw(9) << std::fixed << std::setprecision(2)
              << lo + b * w << " - " << std::setw(9) << lo + (b + 1) * w << " |"
              << std::string(most ? bins[b] * kWidth / most : 0, '#') << " "
              << bins[b] << "\n";
  }
}

Status RunBench(const BenchArgs& a) {
  if (a.requests < 1 || a.concurrency < 1) {
    return InvalidArgument("--requests and --concurrency must be >= 1");
  }
  ASSIGN_OR_RETURN(Plan p, LoadPlan(a.plan));
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(p.model, true));
  RETURN_IF_ERROR(VerifyPlanAgainstModel(p, m.graph));
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(a.cluster));
  CoordinatorOptions co;
  co.timeout_ms = a.timeout_ms;
  ASSIGN_OR_RETURN(auto coord, Coordinator::Create(p, cluster, co));
  DeployReport dep;
  RETURN_IF_ERROR(coord->Deploy(m.weights, &dep));
  Tensor input(p.input_shape);
  std::mt19937_64 rng(1);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& v : input.data) v = nd(rng);
  {  // one warm-up request: first-touch costs are not the steady state
    Tensor out;
    RETURN_IF_ERROR(coord->Run(input, &out, nullptr, 0).WithContext("warm-up"));
  }
  RETURN_IF_ERROR(coord->Stats(/*reset=*/true).status());

  std::atomic<int> next{0}, finished{0};
  std::mutex mu;
  std::vector<double> lat;
  Status first_error;
  int failed = 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto client = [&] {
    for (int i; (i = next++) < a.requests;) {
      Tensor out;
      RunStats s;
      Status st = coord->Run(input, &out, &s, i + 1);
      std::lock_guard<std::mutex> lock(mu);
      if (st.ok()) {
        lat.push_back(s.latency_ms);
      } else {
        failed++;
        if (first_error.ok()) first_error = st;
      }
      finished++;
    }
  };
  std::vector<std::thread> clients;
  for (int k = 0; k < a.concurrency; ++k) clients.emplace_back(client);
  const bool tty = isatty(2);
  while (finished < a.requests) {
    if (tty) {
      const int done = finished;
      const int bar = done * 40 / a.requests;
      std::cerr << "\r[" << std::string(bar, '=') << std::string(40 - bar, ' ')
                << "] " << done << "/" << a.requests << std::flush;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& c : clients) c.join();
  if (tty) std::cerr << "\r" << std::string(60, ' ') << "\r";
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  if (lat.empty()) return first_error.WithContext("every request failed");
  ASSIGN_OR_RETURN(auto ds, coord->Stats(false));

  nlohmann::json j;
  j["plan"] = a.plan;
  j["cluster"] = a.cluster;
  j["strategy"] = p.strategy;
  j["model"] = p.model.spec;
  j["requests"] = a.requests;
  j["concurrency"] = a.concurrency;
  j["failed"] = failed;
  j["latency_ms"] = {{"min", Percentile(lat, 0)},
                     {"median", Percentile(lat, 0.5)},
                     {"p95", Percentile(lat, 0.95)},
                     {"p99", Percentile(lat, 0.99)},
                     {"max", Percentile(lat, 1)}};
  j["throughput_rps"] = lat.size() / wall_s;
  int64_t total = 0;
  j["devices"] = nlohmann::json::array();
  for (const auto& d : ds) {
    // A device's compute per request: the sum of its tasks' medians.
    double compute = 0;
    int64_t runs = 0;
    for (const auto& t : d.task_compute_ms) {
      std::vector<double> v(t.begin(), t.end());
      if (!v.empty()) compute += Percentile(v, 0.5);
      runs += t.size();
    }
    total += d.bytes_sent;
    j["devices"].push_back(
        {{"name", d.name},
         {"compute_ms_median", compute},
         {"busy_ms", d.busy_ms},
         {"idle_ms", std::max(0.0, d.elapsed_ms - d.busy_ms)},
         {"wait_ms_total", d.wait_ms},
         {"task_runs", runs},
         {"bytes_sent", d.bytes_sent},
         {"bytes_received", d.bytes_received},
         {"queue_histogram", d.queue_histogram},
         {"requests_failed", d.requests_failed}});
  }
  j["bytes_total"] = total;
  j["bytes_per_request"] = total / static_cast<double>(lat.size());
  if (!first_error.ok()) j["first_error"] = first_error.message();
  if (a.json) {
    std::cout << j.dump(1) << "\n";
  } else {
    std::cout << std::fixed << std::setprecision(2);
    std::cout << "bench " << a.plan << " (" << p.strategy << ", "
              << p.devices.size() << " devices of " << a.cluster
              << "): " << lat.size() << "/" << a.requests << " requests ok, "
              << a.concurrency << " in flight, " << wall_s << " s\n";
    const auto& l = j["latency_ms"];
    std::cout << "latency ms: min " << l["min"].get<double>() << ", median "
              << l["median"].get<double>() << ", p95 " << l["p95"].get<double>()
              << ", p99 " << l["p99"].get<double>() << ", max "
              << l["max"].get<double>() << "\n";
    std::cout << "throughput " << j["throughput_rps"].get<double>()
              << " requests/s; " << total << " bytes on the wire ("
              << j["bytes_per_request"].get<double>() << " per request)\n";
    PrintHistogram(lat);
    std::cout << "device        compute ms/req    idle ms     bytes sent  "
                 "bytes recv  queue occupancy (0,1,2,..)\n";
    for (const auto& d : j["devices"]) {
      std::string q;
      const auto& h = d["queue_histogram"];
      size_t last = 0;
      for (size_t i = 0; i < h.size(); ++i) {
        if (h[i].get<int64_t>() > 0) last = i;
      }
      for (size_t i = 0; i <= last && i < h.size(); ++i) {
        q += (i ? "," : "") + std::to_string(h[i].get<int64_t>());
      }
      std::cout << "  " << std::left << std::setw(12)
                << d["name"].get<std::string>() << std::right << std::setw(14)
                << d["compute_ms_median"].get<double>() << std::setw(11)
                << d["idle_ms"].get<double>() << std::setw(15)
                << d["bytes_sent"].get<int64_t>() << std::setw(12)
                << d["bytes_received"].get<int64_t>() << "  " << q << "\n";
    }
    if (failed) {
      std::cout << failed
                << " requests failed; first: " << first_error.message() << "\n";
    }
  }
  return failed ? first_error.WithContext(std::to_string(failed) +
                                          " requests failed")
                : Status::Ok();
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
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunBench(*a))); });
}

}  // namespace shoal
