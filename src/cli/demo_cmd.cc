// `shoal demo`: the main job on an embedded default. Today it runs the
// single-device engine on a zoo model with both backends and checks that
// they agree; the cluster demo joins when the runtime lands.
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <random>

#include "cli/commands.h"
#include "engine/executor.h"
#include "graph/cost.h"
#include "models/load_model.h"

namespace shoal {
namespace {

struct DemoArgs {
  std::string model = "alexnet";
  int repeat = 5;
};

Status RunDemo(const DemoArgs& a) {
  LoadOptions lo;
  lo.with_weights = true;
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(m.graph));
  std::cout << "shoal demo: " << m.graph.name << ", " << cost.params
            << " params, " << cost.macs << " MACs, peak activations "
            << cost.peak_activation_bytes << " bytes\n";
  Tensor input(m.graph.FindTensor(m.graph.inputs[0])->shape);
  std::mt19937_64 rng(1);
  std::normal_distribution<float> d(0.f, 1.f);
  for (auto& v : input.data) v = d(rng);

  std::vector<Tensor> outs[2];
  double best_ms[2] = {0, 0};
  const Backend backends[2] = {Backend::kReference, Backend::kOneDnn};
  for (int b = 0; b < 2; ++b) {
    ExecutorOptions eo;
    eo.backend = backends[b];
    ASSIGN_OR_RETURN(auto ex, Executor::Create(m.graph, m.weights, eo));
    const int runs = backends[b] == Backend::kReference ? 1 : a.repeat;
    best_ms[b] = 1e30;
    for (int i = 0; i < runs; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(ex->Run({input}, &outs[b]));
      best_ms[b] =
          std::min(best_ms[b], std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - t0)
                                   .count());
    }
    std::cout << std::fixed << std::setprecision(1) << "  " << std::setw(9)
              << BackendName(backends[b]) << ": " << best_ms[b]
              << " ms (best of " << runs << "), arena "
              << ex->stats().arena_bytes / 1024 << " KiB\n";
  }
  double max_abs = 0, max_ref = 0;
  for (size_t i = 0; i < outs[0][0].data.size(); ++i) {
    max_abs = std::max(
        max_abs, double(std::fabs(outs[0][0].data[i] - outs[1][0].data[i])));
    max_ref = std::max(max_ref, double(std::fabs(outs[0][0].data[i])));
  }
  const double rel = max_abs / std::max(max_ref, 1e-30);
  std::cout << std::scientific << std::setprecision(2)
            << "  oneDNN vs reference: max rel diff " << rel
            << (rel <= 1e-4 ? " (exact within 1e-4)" : " (MISMATCH)") << "\n";
  std::cout << "  (the distributed demo arrives with the runtime: see README, "
               "Status)\n";
  if (rel > 1e-4) return Internal("backends disagree");
  return Status::Ok();
}

}  // namespace

void AddDemoCommand(CLI::App* app) {
  auto a = std::make_shared<DemoArgs>();
  auto* cmd = app->add_subcommand(
      "demo", "Run the main job on an embedded default model");
  cmd->add_option("--model", a->model, "Zoo model (default alexnet)");
  cmd->add_option("--repeat", a->repeat, "Timed oneDNN runs");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunDemo(*a))); });
}

}  // namespace shoal
