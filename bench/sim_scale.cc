// Scale of the planner + simulator: a synthetic chain of L fully connected
// layers (zoo builder) on N simulated devices generated in code, planned by
// each strategy and simulated for R requests. Prints a markdown table; the
// target (issue 7) is under 10 s for plan + simulate of 100 layers on 1000
// devices. Build target shoal_sim_scale; run by bench/sim_scale.sh.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "models/builder.h"
#include "partition/strategy.h"
#include "plan/plan_verify.h"
#include "sim/simulator.h"

namespace shoal {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
      .count();
}

StatusOr<Graph> Chain(int layers, int width) {
  GraphBuilder b("chain" + std::to_string(layers));
  std::string x = b.Input("input", {1, width});
  for (int i = 0; i < layers; ++i) {
    x = b.Linear("fc" + std::to_string(i + 1), x, width);
    if (i + 1 < layers) x = b.Relu(x);
  }
  return b.Finish({x});
}

// Unequal devices: speeds 1, 2, 4 (Pi 3, 2x, 4x) and Wi-Fi or wired links.
Cluster Devices(int n) {
  Cluster c;
  for (int i = 0; i < n; ++i) {
    DeviceSpec d;
    d.name = "d" + std::to_string(i);
    d.speed = double(1 << (i % 3));
    d.memory_bytes = int64_t{1} << 30;
    d.link = i % 2 ? Link{62e6, 0.009} : Link{1e9, 0.0004};
    c.devices.push_back(d);
  }
  return c;
}

// Hands the planner the latency model where PlanOptions takes one (the
// auto strategy); builds either way.
template <typename T>
auto SetLatency(T* po, const LatencyModel& m, int)
    -> decltype(po->latency = std::make_shared<LatencyModel>(m), void()) {
  po->latency = std::make_shared<LatencyModel>(m);
}
template <typename T>
void SetLatency(T*, const LatencyModel&, long) {}

int Main(int argc, char** argv) {
  int layers = 100, devices = 1000, width = 2048, requests = 20;
  std::vector<std::string> strategies = {"pipeline", "lop", "auto"};
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--layers") layers = std::atoi(v.c_str());
    if (k == "--devices") devices = std::atoi(v.c_str());
    if (k == "--width") width = std::atoi(v.c_str());
    if (k == "--requests") requests = std::atoi(v.c_str());
    if (k == "--strategies") {
      strategies.clear();
      size_t a = 0;
      while (a <= v.size()) {
        size_t b = v.find(',', a);
        if (b == std::string::npos) b = v.size();
        strategies.push_back(v.substr(a, b - a));
        a = b + 1;
      }
    }
  }
  auto g = Chain(layers, width);
  if (!g.ok()) {
    std::fprintf(stderr, "%s\n", g.status().message().c_str());
    return 1;
  }
  const Cluster c = Devices(devices);
  const LatencyModel m = LatencyModel::FromCluster(c);
  std::printf(
      "%d fc layers of %d features (%zu nodes) on %d devices, %d requests, 4 "
      "in flight\n\n",
      layers, width, g->nodes.size(), devices, requests);
  std::printf(
      "| strategy | tasks | transfers | plan s | simulate s | total s | "
      "events | predicted median ms | predicted req/s |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool all_ok = true;
  for (const auto& s : strategies) {
    PlanOptions po;
    po.strategy = s;
    po.devices = c.PlanDevices();
    po.model.spec = "chain";
    SetLatency(&po, m, 0);
    const auto t0 = std::chrono::steady_clock::now();
    auto p = MakePlan(*g, po);
    if (p.ok()) {
      Status v = VerifyPlan(*p);
      if (!v.ok()) p = v;
    }
    const double plan_s = Since(t0);
    if (!p.ok()) {
      std::printf("| %s | planning failed: %s |\n", s.c_str(),
                  p.status().message().c_str());
      all_ok = false;
      continue;
    }
    // auto says how its MILP ended (optimal, time limit, not used).
    if (p->prediction) {
      std::fprintf(stderr, "%s: chose %s; %s\n", s.c_str(),
                   p->prediction->method.c_str(),
                   p->prediction->solver.c_str());
      for (const auto& a : p->prediction->alternatives) {
        if (a.latency_s > 0 || a.name.rfind("milp", 0) == 0 ||
            a.name.rfind("procedure1", 0) == 0)
          std::fprintf(stderr, "  %s: %.1f ms %s\n", a.name.c_str(),
                       a.latency_s * 1e3, a.note.c_str());
      }
    }
    SimOptions so;
    so.requests = requests;
    so.concurrency = 4;
    const auto t1 = std::chrono::steady_clock::now();
    auto r = Simulate(*p, m, so);
    const double sim_s = Since(t1);
    if (!r.ok()) {
      std::printf("| %s | simulation failed: %s |\n", s.c_str(),
                  r.status().message().c_str());
      all_ok = false;
      continue;
    }
    std::vector<double> lat = r->latency_ms;
    std::sort(lat.begin(), lat.end());
    std::printf(
        "| %s | %zu | %zu | %.2f | %.2f | %.2f | %lld | %.1f | %.2f |\n",
        s.c_str(), p->tasks.size(), p->transfers.size(), plan_s, sim_s,
        plan_s + sim_s, static_cast<long long>(r->events), lat[lat.size() / 2],
        r->wall_s > 0 ? requests / r->wall_s : 0);
    std::fflush(stdout);
  }
  return all_ok ? 0 : 1;
}

}  // namespace
}  // namespace shoal

int main(int argc, char** argv) { return shoal::Main(argc, argv); }
