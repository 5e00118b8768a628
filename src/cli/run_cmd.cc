// `shoal run --plan plan.json --local | --cluster FILE.yaml`: runs a Plan in
// this process, each device a thread, or on the cluster's worker daemons;
// with --check compares the output with the model run whole on one device.
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "cli/deploy_progress.h"
#include "cli/plan_common.h"
#include "cluster/cluster.h"
#include "engine/run_whole.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "io/image.h"
#include "io/npy.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "runtime/coordinator.h"
#include "runtime/local_runner.h"
#include "util/units.h"

namespace shoal {
namespace {

struct RunArgs {
  std::string plan, input, image, output, backend = "onednn", cluster,
                                          advertise;
  int64_t random_seed = 1;
  int threads = 1;
  int64_t timeout_ms = 60000;
  bool local = false, check = false, json = false;
};

Status RunRun(const RunArgs& a, int* exit_code) {
  if (a.local == !a.cluster.empty()) {
    return InvalidArgument(
        "shoal run needs one of --local (devices as threads of this process) "
        "or --cluster FILE.yaml (the cluster's worker daemons)");
  }
  ASSIGN_OR_RETURN(Backend backend, ParseBackend(a.backend));
  ASSIGN_OR_RETURN(Plan p, LoadPlan(a.plan));
  ASSIGN_OR_RETURN(Model m, LoadPlanModel(p.model, true));
  RETURN_IF_ERROR(VerifyPlanAgainstModel(p, m.graph)
                      .WithContext("plan " + a.plan + " does not fit model " +
                                   p.model.spec));
  Tensor input;
  std::optional<ImageNormalization> pixels;  // the input is an image
  if (!a.input.empty() + !a.image.empty() > 1) {
    return InvalidArgument("give one of --input and --image");
  }
  if (!a.input.empty()) {
    ASSIGN_OR_RETURN(input, ReadNpy(a.input));
    if (input.shape != p.input_shape) {
      return InvalidArgument(
          "input " + a.input + " has shape " + ShapeToString(input.shape) +
          " but the model expects " + ShapeToString(p.input_shape));
    }
  } else if (!a.image.empty()) {
    if (p.input_shape.size() != 4) {
      return InvalidArgument("--image: the plan's input " +
                             ShapeToString(p.input_shape) + " is not an image");
    }
    pixels = DefaultNormalization(p.input_shape[1]);
    ASSIGN_OR_RETURN(input, LoadImage(a.image, p.input_shape, *pixels));
  } else {
    input = RandomPlanInput(p, a.random_seed, &pixels);
  }
  Tensor out;
  RunStats stats;
  std::vector<double> device_ms(p.devices.size(), 0.0);
  DeployReport deploy;
  if (a.local) {
    LocalRunOptions lo;
    lo.backend = backend;
    lo.threads_per_device = a.threads;
    ASSIGN_OR_RETURN(auto runner, LocalRunner::Create(p, m.weights, lo));
    RETURN_IF_ERROR(runner->Run(input, &out, &stats));
    for (const auto& t : p.tasks)
      device_ms[p.DeviceOf(t.id)] += stats.task_ms[t.id];
  } else {
    ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(a.cluster));
    CoordinatorOptions co;
    co.timeout_ms = a.timeout_ms;
    co.advertise = a.advertise;
    co.pixels = pixels;
    auto upload = ShowDeployProgress(&co);
    ASSIGN_OR_RETURN(auto coord, Coordinator::Create(p, cluster, co));
    RETURN_IF_ERROR(coord->Deploy(m.weights, &deploy));
    upload->Finish();
    RETURN_IF_ERROR(coord->Stats(/*reset=*/true).status());
    RETURN_IF_ERROR(coord->Run(input, &out, &stats, 0));
    ASSIGN_OR_RETURN(auto ds, coord->Stats(false));
    for (size_t d = 0; d < ds.size(); ++d) {
      for (size_t t = 0; t < ds[d].task_compute_ms.size(); ++t) {
        for (float v : ds[d].task_compute_ms[t]) {
          device_ms[d] += v;
          stats.task_ms[t] += v;
        }
      }
    }
  }
  if (!a.output.empty()) RETURN_IF_ERROR(WriteNpy(a.output, out));

  // Exact plans must match within 1e-4; a plan whose activations travel
  // as f16 or bf16 within that dtype's tolerance (Plan::wire).
  const double tolerance = WireTolerance(p.wire.dtype);
  std::ostringstream tol_text;
  tol_text << tolerance;
  TensorDiff diff;
  if (a.check) {
    ExecutorOptions eo;
    eo.backend = backend;
    ASSIGN_OR_RETURN(Tensor ref, RunWhole(m, input, eo));
    diff = DiffTensors(out, ref);
    if (!(diff.max_rel <= tolerance)) *exit_code = 1;
  }
  const double max_abs = diff.max_abs, max_rel = diff.max_rel;
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
      nlohmann::json dj = {{"name", p.devices[d].name},
                           {"compute_ms", device_ms[d]},
                           {"bytes_sent", stats.bytes_sent[d]},
                           {"bytes_received", stats.bytes_received[d]}};
      if (!a.local) {
        dj["deploy_reused"] = bool(deploy.reused[d]);
        dj["deploy_uploaded_bytes"] = deploy.uploaded_bytes[d];
        dj["weight_bytes"] = deploy.weight_bytes[d];
      }
      j["devices"].push_back(dj);
    }
    if (!a.local) {
      j["cluster"] = a.cluster;
      j["deploy_ms"] = deploy.ms;
    }
    if (a.check) {
      j["max_abs_diff"] = max_abs;
      j["max_rel_diff"] = max_rel;
      j["check_passed"] = max_rel <= tolerance;
      j["check_tolerance"] = tolerance;
    }
    std::cout << j.dump(1) << "\n";
  } else {
    if (!a.local) {
      int reused = 0;
      int64_t up = 0;
      for (size_t d = 0; d < p.devices.size(); ++d) {
        reused += deploy.reused[d];
        up += deploy.uploaded_bytes[d];
      }
      std::cout << "deployed to " << p.devices.size() << " workers in "
                << HumanMs(deploy.ms) << " (" << reused << " already had it; "
                << HumanBytes(up) << " of weights uploaded)\n";
    }
    std::cout << "ran " << a.plan << " (" << p.strategy << ", "
              << Plural(static_cast<int64_t>(p.devices.size()), "device")
              << (a.local ? "" : " of " + a.cluster) << ") in "
              << HumanMs(stats.latency_ms) << "; output "
              << ShapeToString(out.shape) << "; "
              << HumanBytes(stats.bytes_total) << " between devices\n";
    if (a.check) {
      std::cout << "check against one device: max abs diff " << max_abs
                << ", max rel diff " << max_rel
                << (max_rel <= tolerance
                        ? " (ok)"
                        : " (FAILED: above " + tol_text.str() + ")")
                << (p.wire.dtype == WireDtype::kF32
                        ? ""
                        : " [activations as " + WireDtypeName(p.wire.dtype) +
                              "; tolerance " + tol_text.str() + "]")
                << "\n";
    }
  }
  if (*exit_code != 0) {
    std::cerr << "shoal: error: the plan's output differs from the one-device "
                 "run by "
              << max_rel << " (relative), above " << tol_text.str() << "\n";
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
  cmd->add_option("--cluster", a->cluster,
                  "Run on the worker daemons of this cluster file");
  cmd->add_option("--timeout-ms", a->timeout_ms,
                  "Deadline of the request with --cluster (default 60000)");
  AddAdvertiseOption(cmd, &a->advertise);
  cmd->add_option("--input", a->input, "Input tensor (.npy)");
  cmd->add_option("--image", a->image,
                  "Input image (PNG, JPEG, ...), resized and normalised; "
                  "it travels to the devices as 8-bit pixels");
  cmd->add_option("--input-seed", a->random_seed,
                  "Seed of a random normal input when no --input (default 1)");
  cmd->add_option("--output", a->output, "Write the output (.npy)");
  cmd->add_flag(
      "--check", a->check,
      "Compare with the model run on one device (exit 1 above 1e-4, or the "
      "tolerance of a plan whose activations travel as f16/bf16)");
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
