// `shoal run --plan plan.json --local | --cluster FILE.yaml`: runs a Plan in
// this process, each device a thread, or on the cluster's worker daemons;
// with --check compares the output with the model run whole on one device.
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.h"
#include "cli/deploy_progress.h"
#include "cli/plan_common.h"
#include "cluster/cluster.h"
#include "engine/run_whole.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "io/image.h"
#include "io/image_metadata.h"
#include "io/npy.h"
#include "models/load_model.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "runtime/coordinator.h"
#include "runtime/local_runner.h"
#include "runtime/random_plan_input.h"
#include "serve/classify.h"
#include "util/units.h"

namespace shoal {
namespace {

struct RunArgs {
  std::string plan, input, image, output,
      backend = BackendName(kDefaultBackend), cluster, advertise;
  int64_t random_seed = 1;
  int threads = 1;
  int64_t timeout_ms = 60000;
  bool local = false, check = false, json = false;
};

// The input: an .npy file, an image, or a seeded random tensor; `pixels`
// is set when the input is an image (sent as 8-bit pixels), normalised as
// the model's metadata says (ImageNet's way when it says nothing).
StatusOr<Tensor> RunInput(const RunArgs& a, const Plan& p,
                          const ModelMetadata& metadata,
                          std::optional<ImageNormalization>* pixels) {
  if (!a.input.empty() + !a.image.empty() > 1) {
    return InvalidArgument("give one of --input and --image");
  }
  if (!a.input.empty()) {
    return ReadNpy(a.input, p.input_shape, "the plan's model");
  }
  if (!a.image.empty()) {
    if (p.input_shape.size() != 4) {
      return InvalidArgument("--image: the plan's input " +
                             ShapeToString(p.input_shape) + " is not an image");
    }
    auto norm = ImageNormalizationOf(metadata, p.input_shape[1]);
    if (!norm.ok()) return norm.status().WithContext(p.model.spec);
    *pixels = *norm;
    return LoadImage(a.image, p.input_shape, **pixels);
  }
  return RandomPlanInput(p, a.random_seed, pixels);
}

// One run of the plan and what it cost each device.
struct RunOutcome {
  Tensor out;
  RunStats stats;
  std::vector<double> device_ms;
  DeployReport deploy;  // on a cluster
  // Of an image's classifier output: its best class, with its name where
  // the model's metadata (or ImageNet's 1000) names it.
  std::optional<ClassScore> top;
};

// The best class of `out` when the input was an image and the output is a
// classifier's.
Status FindTopClass(const ModelMetadata& metadata, RunOutcome* r) {
  const Tensor& y = r->out;
  if (!(y.shape.size() == 2 && y.shape[0] == 1 && y.shape[1] > 1))
    return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<std::string> names, ClassNamesOf(metadata));
  if (names.size() != y.data.size()) names = KnownClassNames(y.shape[1]);
  ASSIGN_OR_RETURN(std::vector<ClassScore> top, TopClasses(y, 1, names));
  r->top = top[0];
  return Status::Ok();
}

Status RunLocally(const RunArgs& a, const Plan& p, const Model& m,
                  Backend backend, const Tensor& input, RunOutcome* r) {
  LocalRunOptions lo;
  lo.backend = backend;
  lo.threads_per_device = a.threads;
  ASSIGN_OR_RETURN(auto runner, LocalRunner::Create(p, m.weights, lo));
  RETURN_IF_ERROR(runner->Run(input, &r->out, &r->stats));
  for (const auto& t : p.tasks) {
    r->device_ms[p.DeviceOf(t.id)] += r->stats.task_ms[t.id];
  }
  return Status::Ok();
}

Status RunOnCluster(const RunArgs& a, const Plan& p, const Model& m,
                    const std::optional<ImageNormalization>& pixels,
                    const Tensor& input, RunOutcome* r) {
  ASSIGN_OR_RETURN(Cluster cluster, LoadCluster(a.cluster));
  CoordinatorOptions co;
  co.timeout_ms = a.timeout_ms;
  co.advertise = a.advertise;
  co.pixels = pixels;
  auto upload = ShowDeployProgress(&co);
  ASSIGN_OR_RETURN(auto coord, Coordinator::Create(p, cluster, co));
  RETURN_IF_ERROR(coord->Deploy(m.weights, &r->deploy));
  upload->Finish();
  RETURN_IF_ERROR(coord->Stats(/*reset=*/true).status());
  RETURN_IF_ERROR(coord->Run(input, &r->out, &r->stats, 0));
  ASSIGN_OR_RETURN(auto ds, coord->Stats(false));
  for (size_t d = 0; d < ds.size(); ++d) {
    for (size_t t = 0; t < ds[d].task_compute_ms.size(); ++t) {
      for (float v : ds[d].task_compute_ms[t]) {
        r->device_ms[d] += v;
        r->stats.task_ms[t] += v;
      }
    }
  }
  return Status::Ok();
}

// --check: the output against the model run whole on one device. Exact
// plans must match within 1e-4; a plan whose activations travel as f16 or
// bf16 within that dtype's tolerance (Plan::wire).
struct Check {
  bool done = false;
  TensorDiff diff;
  double tolerance = 0;
  bool passed() const { return !done || diff.max_rel <= tolerance; }
  std::string tolerance_text() const {
    std::ostringstream o;
    o << tolerance;
    return o.str();
  }
};

nlohmann::json RunJson(const RunArgs& a, const Plan& p, const RunOutcome& r,
                       const Check& c) {
  nlohmann::json j;
  j["plan"] = a.plan;
  j["model"] = p.model.spec;
  j["strategy"] = p.strategy;
  j["output_shape"] = r.out.shape;
  j["latency_ms"] = r.stats.latency_ms;
  j["elements_total"] = r.stats.elements_total;
  j["bytes_total"] = r.stats.bytes_total;
  j["devices"] = nlohmann::json::array();
  for (size_t d = 0; d < p.devices.size(); ++d) {
    nlohmann::json dj = {{"name", p.devices[d].name},
                         {"compute_ms", r.device_ms[d]},
                         {"bytes_sent", r.stats.bytes_sent[d]},
                         {"bytes_received", r.stats.bytes_received[d]}};
    if (!a.local) {
      dj["deploy_reused"] = bool(r.deploy.reused[d]);
      dj["deploy_uploaded_bytes"] = r.deploy.uploaded_bytes[d];
      dj["weight_bytes"] = r.deploy.weight_bytes[d];
    }
    j["devices"].push_back(dj);
  }
  if (!a.local) {
    j["cluster"] = a.cluster;
    j["deploy_ms"] = r.deploy.ms;
  }
  if (r.top) {
    j["top_class"] = {{"index", r.top->index}, {"score", r.top->score}};
    if (!r.top->name.empty()) j["top_class"]["name"] = r.top->name;
  }
  if (c.done) {
    j["max_abs_diff"] = c.diff.max_abs;
    j["max_rel_diff"] = c.diff.max_rel;
    j["check_passed"] = c.passed();
    j["check_tolerance"] = c.tolerance;
  }
  return j;
}

void PrintRun(const RunArgs& a, const Plan& p, const RunOutcome& r,
              const Check& c) {
  if (!a.local) {
    int reused = 0;
    int64_t up = 0;
    for (size_t d = 0; d < p.devices.size(); ++d) {
      reused += r.deploy.reused[d];
      up += r.deploy.uploaded_bytes[d];
    }
    std::cout << "deployed to " << p.devices.size() << " workers in "
              << HumanMs(r.deploy.ms) << " (" << reused << " already had it; "
              << HumanBytes(up) << " of weights uploaded)\n";
  }
  std::cout << "ran " << a.plan << " (" << p.strategy << ", "
            << Plural(static_cast<int64_t>(p.devices.size()), "device")
            << (a.local ? "" : " of " + a.cluster) << ") in "
            << HumanMs(r.stats.latency_ms) << "; output "
            << ShapeToString(r.out.shape) << "; "
            << HumanBytes(r.stats.bytes_total) << " between devices\n";
  if (r.top) {
    std::cout << "class " << r.top->index
              << (r.top->name.empty() ? "" : " " + r.top->name) << " (score "
              << r.top->score << ")\n";
  }
  if (!c.done) return;
  std::cout << "check against one device: max abs diff " << c.diff.max_abs
            << ", max rel diff " << c.diff.max_rel
            << (c.passed() ? " (ok)"
                           : " (FAILED: above " + c.tolerance_text() + ")")
            << (p.wire.dtype == WireDtype::kF32
                    ? ""
                    : " [activations as " + WireDtypeName(p.wire.dtype) +
                          "; tolerance " + c.tolerance_text() + "]")
            << "\n";
}

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
  // What the model's file says about its input and classes (--image).
  ModelMetadata metadata;
  if (!a.image.empty()) {
    ASSIGN_OR_RETURN(metadata, LoadModelMetadata(p.model.spec));
  }
  std::optional<ImageNormalization> pixels;  // the input is an image
  ASSIGN_OR_RETURN(const Tensor input, RunInput(a, p, metadata, &pixels));
  RunOutcome r;
  r.device_ms.assign(p.devices.size(), 0.0);
  RETURN_IF_ERROR(a.local ? RunLocally(a, p, m, backend, input, &r)
                          : RunOnCluster(a, p, m, pixels, input, &r));
  if (!a.output.empty()) RETURN_IF_ERROR(WriteNpy(a.output, r.out));
  if (pixels && !a.image.empty()) {
    RETURN_IF_ERROR(FindTopClass(metadata, &r).WithContext(p.model.spec));
  }
  Check c;
  c.tolerance = WireTolerance(p.wire.dtype);
  if (a.check) {
    ExecutorOptions eo;
    eo.backend = backend;
    ASSIGN_OR_RETURN(Tensor ref, RunWhole(m, input, eo));
    c.done = true;
    c.diff = DiffTensors(r.out, ref);
    if (!c.passed()) *exit_code = 1;
  }
  if (a.json) {
    std::cout << RunJson(a, p, r, c).dump(1) << "\n";
  } else {
    PrintRun(a, p, r, c);
  }
  if (*exit_code != 0) {
    std::cerr << "shoal: error: the plan's output differs from the one-device "
                 "run by "
              << c.diff.max_rel << " (relative), above " << c.tolerance_text()
              << "\n";
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
  cmd->add_option("--backend", a->backend,
                  "onednn, xnnpack or reference (default: xnnpack on arm64, "
                  "onednn elsewhere)");
  cmd->add_option("--threads-per-device", a->threads,
                  "Kernel threads of each emulated device (default 1)");
  cmd->callback([a] {
    int code = 0;
    Status s = RunRun(*a, &code);
    throw CommandExit(s.ok() ? code : ReportStatus(s));
  });
}

}  // namespace shoal
