// `shoal kernels MODEL` (and `shoal-worker kernels MODEL` on a board): which
// kernel each node of MODEL gets from this machine's engine, the share of
// the model's MACs in each, and with --repeat the model's latency. Kernels
// are chosen when the executor is built, so listing them runs nothing:
// under qemu it is the cheap way to see what a board's cores would run.
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/kernels_check.h"
#include "engine/executor.h"
#include "engine/node_kernels.h"
#include "graph/random_input.h"
#include "models/zoo.h"
#include "util/stats.h"
#include "util/units.h"

namespace shoal {
namespace {

struct KernelsArgs {
  std::string model, backend = BackendName(kDefaultBackend), input_shape;
  std::string dtype = "f32";
  uint64_t weight_seed = 0;
  int threads = 0, repeat = 0, check = 0;
  bool json = false;
};

// The zoo alone: what the worker's build has.
StatusOr<Model> LoadZooModel(const std::string& spec,
                             const std::optional<Shape>& shape, uint64_t seed) {
  const ZooEntry* e = Zoo::Global().Find(spec);
  if (e == nullptr) {
    std::string names;
    for (const auto& z : Zoo::Global().entries()) names += " " + z.name;
    return NotFound("'" + spec + "' is not a zoo model (zoo:" + names + ")");
  }
  Model m;
  ASSIGN_OR_RETURN(m.graph, e->build(shape.value_or(e->input_shape)));
  m.weights = RandomWeights(m.graph, seed);
  return m;
}

std::string Machine() {
  utsname u{};
  return uname(&u) == 0 ? u.machine : "?";
}

Status Run(const KernelsArgs& a, const KernelsModelLoader& load) {
  ASSIGN_OR_RETURN(Backend backend, ParseBackend(a.backend));
  if (a.threads < 0) return InvalidArgument("--threads must be >= 0");
  if (a.repeat < 0) return InvalidArgument("--repeat must be >= 0");
  if (a.check < 0) return InvalidArgument("--check must be >= 0");
  ASSIGN_OR_RETURN(std::optional<Shape> shape,
                   ParseInputShapeFlag(a.input_shape));
  ASSIGN_OR_RETURN(Model m, load ? load(a.model, shape, a.weight_seed)
                                 : LoadZooModel(a.model, shape, a.weight_seed));
  if (a.dtype == "int8") RETURN_IF_ERROR(QuantizeOnUniformInputs(&m, 2));
  // --check runs the model again, on this backend and the reference.
  const Model checked = a.check > 0 ? m : Model{};
  const Graph g = m.graph;
  ExecutorOptions eo;
  eo.backend = backend;
  eo.threads = a.threads;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(g, std::move(m.weights), eo));
  ASSIGN_OR_RETURN(std::vector<NodeKernel> nodes, KernelsOfNodes(g, *ex));
  const auto by_kernel = MacsByKernel(nodes);
  int64_t total = 0;
  for (const auto& [k, macs] : by_kernel) total += macs;

  BackendCheck check;
  if (a.check > 0) {
    ASSIGN_OR_RETURN(check, CheckAgainstReference(checked, nodes, backend,
                                                  a.threads, a.check, 5));
  }

  std::vector<double> ms;
  if (a.repeat > 0) {
    std::vector<Tensor> inputs, outputs;
    for (const auto& name : g.inputs)
      inputs.push_back(RandomInput(g.FindTensor(name)->shape, 1));
    RETURN_IF_ERROR(ex->Run(inputs, &outputs));  // warm-up
    for (int i = 0; i < a.repeat; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      RETURN_IF_ERROR(ex->Run(inputs, &outputs));
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0)
                       .count());
    }
  }

  if (a.json) {
    nlohmann::json jn = nlohmann::json::array();
    for (const auto& n : nodes) {
      jn.push_back({{"node", n.node},
                    {"op", n.op},
                    {"kernel", n.kernel},
                    {"impl", n.impl},
                    {"macs", n.macs}});
    }
    nlohmann::json j = {
        {"model", g.name},      {"backend", BackendName(backend)},
        {"machine", Machine()}, {"threads", KernelThreads()},
        {"macs", total},        {"macs_by_kernel", by_kernel},
        {"nodes", jn}};
    j["dtype"] = a.dtype;
    if (a.check > 0) {
      nlohmann::json layers = nlohmann::json::array();
      for (const auto& l : check.layers) {
        layers.push_back({{"node", l.node},
                          {"impl", l.impl},
                          {"max_diff", l.max_diff},
                          {"off_fraction", l.off_fraction},
                          {"values", l.values}});
      }
      j["check"] = {{"samples", check.samples},
                    {"top1_equal", check.top1_equal},
                    {"max_diff", check.max_diff},
                    {"layers", layers}};
    }
    if (!ms.empty()) {
      j["latency_ms"] = {{"median", Median(ms)},
                         {"min", *std::min_element(ms.begin(), ms.end())},
                         {"runs", a.repeat}};
    }
    std::cout << j.dump(2) << std::endl;
    return Status::Ok();
  }
  std::cout << g.name << " on " << BackendName(backend) << " (" << Machine()
            << ", " << Plural(KernelThreads(), "thread")
            << "): " << HumanCount(total) << " MACs\n";
  // XNNPACK's quantized layers by the implementation they took ("qc8",
  // "f32-sums"), beneath its line.
  std::map<std::string, int64_t> xnn_impls;
  for (const auto& n : nodes)
    if (n.kernel == "xnnpack" && !n.impl.empty() && n.macs > 0)
      xnn_impls["xnnpack " + n.impl] += n.macs;
  for (const auto& [k, macs] : by_kernel) {
    std::printf("  %-30s %10s MACs %6.1f %%\n", k.c_str(),
                HumanCount(macs).c_str(), total > 0 ? 100.0 * macs / total : 0);
    if (k != "xnnpack") continue;
    for (const auto& [impl, m] : xnn_impls) {
      std::printf("    %-28s %10s MACs %6.1f %%\n", impl.c_str(),
                  HumanCount(m).c_str(), total > 0 ? 100.0 * m / total : 0);
    }
  }
  // The nodes whose MACs the chosen backend left to another kernel.
  for (const auto& n : nodes) {
    if (n.macs > 0 && n.kernel != BackendName(backend)) {
      std::cout << "  " << n.node << " (" << n.op << ", " << HumanCount(n.macs)
                << " MACs) on " << (n.kernel.empty() ? "no step" : n.kernel)
                << (n.impl.empty() ? "" : " " + n.impl) << "\n";
    }
  }
  if (a.check > 0) {
    std::printf(
        "against the reference kernels on %d inputs: top-1 equal on %d, "
        "outputs within %.3g of the largest\n",
        check.samples, check.top1_equal, check.max_diff);
    for (const auto& l : check.layers) {
      if (l.impl == "qc8") {
        std::printf(
            "  %s alone (qc8): int8 values within %g steps, %.2f %% off\n",
            l.node.c_str(), l.max_diff, 100 * l.off_fraction);
      } else {
        std::printf("  %s alone (%s): within %.3g of its largest output\n",
                    l.node.c_str(), l.impl.c_str(), l.max_diff);
      }
    }
  }
  if (!ms.empty()) {
    std::printf("latency: median %.2f ms, min %.2f ms over %d runs\n",
                Median(ms), *std::min_element(ms.begin(), ms.end()), a.repeat);
  }
  return Status::Ok();
}

}  // namespace

void AddKernelsCommand(CLI::App* app, KernelsModelLoader load) {
  auto a = std::make_shared<KernelsArgs>();
  auto* cmd = app->add_subcommand(
      "kernels",
      "Which kernel runs each node of a model on this machine, and the share "
      "of its MACs in each (--repeat N: also time N runs)");
  cmd->add_option("model", a->model,
                  load ? "Zoo name or path to an .onnx file" : "Zoo name")
      ->required();
  cmd->add_option("--backend", a->backend,
                  "onednn, xnnpack or reference (default: xnnpack on arm64, "
                  "onednn elsewhere)");
  cmd->add_option("--threads", a->threads,
                  "Kernel threads (default: all cores)");
  cmd->add_option("--input-shape", a->input_shape, "Override the input shape");
  cmd->add_option("--weights-seed", a->weight_seed,
                  "Seed of zoo models' random weights");
  cmd->add_option("--repeat", a->repeat,
                  "Also time this many runs on a random input (after one "
                  "warm-up run)");
  cmd->add_option("--dtype", a->dtype,
                  "f32 (the default) or int8: quantize the model first, "
                  "calibrated on 16 seeded random inputs in [0, 1]")
      ->check(CLI::IsMember({"f32", "int8"}));
  cmd->add_option("--check", a->check,
                  "Also run this many seeded random inputs on the backend and "
                  "on the reference kernels and compare: the outputs, and "
                  "each XNNPACK int8 layer alone on the reference's input");
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a, load] { throw CommandExit(ReportStatus(Run(*a, load))); });
}

}  // namespace shoal
