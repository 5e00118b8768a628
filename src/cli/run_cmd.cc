// `shoal run --plan plan.json --local`: runs a Plan in this process, each
// device a thread, and with --check compares the output with the model run
// whole on one device.
#include <cmath>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>

#include "cli/commands.h"
#include "cli/plan_common.h"
#include "engine/executor.h"
#include "io/npy.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "runtime/local_runner.h"

namespace shoal {
namespace {

struct RunArgs {
  std::string plan, input, output, backend = "onednn", cluster;
  int64_t random_seed = 1;
  int threads = 1;
  bool local = false, check = false, json = false;
};

constexpr double kCheckTolerance = 1e-4;

Status RunRun(const RunArgs& a, int* exit_code) {
  if (!a.local) {
    return Unsupported(
        "shoal run needs --local: the distributed runtime (worker daemons "
        "over gRPC, --cluster) is not built yet");
  }
  ASSIGN_OR_RETURN(Backend backend, ParseBackend(a.backend));
  ASSIGN_OR_RETURN(Plan p, LoadPlan(a.plan));
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(p.model, true));
  RETURN_IF_ERROR(VerifyPlanAgainstModel(p, m.graph)
                      .WithContext("plan " + a.plan + " does not fit model " +
                                   p.model.spec));
  Tensor input;
  if (!a.input.empty()) {
    ASSIGN_OR_RETURN(input, ReadNpy(a.input));
    if (input.shape != p.input_shape) {
      return InvalidArgument(
          "input " + a.input + " has shape " + ShapeToString(input.shape) +
          " but the model expects " + ShapeToString(p.input_shape));
    }
  } else {
    input = Tensor(p.input_shape);
    std::mt19937_64 rng(a.random_seed);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& v : input.data) v = nd(rng);
  }
  LocalRunOptions lo;
  lo.backend = backend;
  lo.threads_per_device = a.threads;
  ASSIGN_OR_RETURN(auto runner, LocalRunner::Create(p, m.weights, lo));
  Tensor out;
  RunStats stats;
  RETURN_IF_ERROR(runner->Run(input, &out, &stats));
  if (!a.output.empty()) RETURN_IF_ERROR(WriteNpy(a.output, out));

  double max_abs = 0, max_rel = 0;
  if (a.check) {
    ExecutorOptions eo;
    eo.backend = backend;
    ASSIGN_OR_RETURN(auto ex, Executor::Create(m.graph, m.weights, eo));
    std::vector<Tensor> ref;
    RETURN_IF_ERROR(ex->Run({input}, &ref));
    double scale = 0;
    for (float v : ref[0].data) scale = std::max(scale, std::fabs(double(v)));
    for (size_t i = 0; i < out.data.size(); ++i) {
      max_abs =
          std::max(max_abs, std::fabs(double(out.data[i]) - ref[0].data[i]));
    }
    max_rel = scale > 0 ? max_abs / scale : max_abs;
    if (!(max_rel <= kCheckTolerance)) *exit_code = 1;
  }
  if (a.json) {
    nlohmann::json j;
    j["plan"] = a.plan;
    j["model"] = p.model.spec;
    j["strategy"] = p.strategy;
    j["output_shape"] = out.shape;
    j["latency_ms"] = stats.latency_ms;
    j["elements_total"] = stats.elements_total;
    j["bytes_total"] = stats.bytes_total;
    j["devices"] = nlohmann::json::array();
    for (size_t d = 0; d < p.devices.size(); ++d) {
      double ms = 0;
      for (const auto& t : p.tasks) {
        if (p.DeviceOf(t.id) == static_cast<int>(d)) ms += stats.task_ms[t.id];
      }
      j["devices"].push_back({{"name", p.devices[d].name},
                              {"compute_ms", ms},
                              {"bytes_sent", stats.bytes_sent[d]},
                              {"bytes_received", stats.bytes_received[d]}});
    }
    if (a.check) {
      j["max_abs_diff"] = max_abs;
      j["max_rel_diff"] = max_rel;
      j["check_passed"] = max_rel <= kCheckTolerance;
    }
    std::cout << j.dump(1) << "\n";
  } else {
    std::cout << "ran " << a.plan << " (" << p.strategy << ", "
              << p.devices.size() << " devices) in " << stats.latency_ms
              << " ms; output " << ShapeToString(out.shape) << "; "
              << stats.bytes_total << " bytes between devices\n";
    if (a.check) {
      std::cout << "check against one device: max abs diff " << max_abs
                << ", max rel diff " << max_rel
                << (max_rel <= kCheckTolerance ? " (ok)"
                                               : " (FAILED: above 1e-4)")
                << "\n";
    }
  }
  if (*exit_code != 0) {
    std::cerr << "shoal: error: the plan's output differs from the one-device "
                 "run by "
              << max_rel << " (relative), above 1e-4\n";
  }
  return Status::Ok();
}

}  // namespace

void AddRunCommand(CLI::App* app) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* cmd = app->add_subcommand("run", "Run a Plan");
  cmd->add_option("--plan", a->plan, "Plan file (JSON)")->required();
  cmd->add_flag("--local", a->local,
                "Run every device as a thread of this process");
  cmd->add_option("--input", a->input, "Input tensor (.npy)");
  cmd->add_option("--random-seed", a->random_seed,
                  "Seed of a random normal input when no --input (default 1)");
  cmd->add_option("--output", a->output, "Write the output (.npy)");
  cmd->add_flag("--check", a->check,
                "Compare with the model run on one device (exit 1 above 1e-4)");
  cmd->add_flag("--json", a->json, "Print JSON");
  cmd->add_option("--backend", a->backend, "onednn or reference");
  cmd->add_option("--threads-per-device", a->threads,
                  "Kernel threads of each emulated device (default 1)");
  cmd->callback([a] {
    int code = 0;
    Status s = RunRun(*a, &code);
    throw CommandExit(s.ok() ? code : ReportStatus(s));
  });
}

}  // namespace shoal
