// `shoal infer MODEL`: one device, one model, the local CPU.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "cli/calibration_flags.h"
#include "cli/commands.h"
#include "engine/executor.h"
#include "engine/op_profile.h"
#include "graph/op_registry.h"
#include "graph/random_input.h"
#include "io/image.h"
#include "io/image_metadata.h"
#include "io/npy.h"
#include "models/imagenet_classes.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "util/stats.h"
#include "util/units.h"

namespace shoal {
namespace {

struct InferArgs {
  std::string model, input, image, output,
      backend = BackendName(kDefaultBackend), input_shape;
  int64_t random_seed = -1;
  uint64_t weight_seed = 0;
  int threads = 0, repeat = 1;
  bool json = false, profile = false;
  int top_steps = 10;
  std::vector<float> mean, std;
  DtypeFlags dtype;
};

int64_t PeakRssBytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;
}

// The input: an .npy file, an image, or a seeded random tensor. An image
// is normalised as --mean/--std say, else as the model's metadata does,
// else ImageNet's way.
StatusOr<Tensor> InferInput(const InferArgs& a, const Model& m,
                            const ModelMetadata& metadata,
                            const Shape& in_shape) {
  const int sources =
      !a.input.empty() + !a.image.empty() + (a.random_seed >= 0);
  if (sources > 1) {
    return InvalidArgument("give one of --input, --image, --input-seed");
  }
  if (!a.input.empty()) {
    return ReadNpy(a.input, in_shape, "model '" + m.graph.name + "'");
  }
  if (!a.image.empty()) {
    auto stated =
        ImageNormalizationOf(metadata, in_shape.size() == 4 ? in_shape[1] : 3);
    if (!stated.ok()) return stated.status().WithContext(a.model);
    ImageNormalization norm = *stated;
    if (!a.mean.empty()) norm.mean = a.mean;
    if (!a.std.empty()) norm.std = a.std;
    return LoadImage(a.image, in_shape, norm);
  }
  return RandomInput(in_shape, a.random_seed >= 0 ? a.random_seed : 0);
}

// The timed runs (one warm-up first when there are several) and, with
// --profile, as many again with each step timed alone: after the timed
// ones, so that timing each step apart (a stream wait and two clock reads
// per step) leaves the latency figures as they are.
struct Timed {
  std::vector<Tensor> outputs;
  std::vector<double> ms;
  OpProfile profile;
};

// Per step, the kernel a profile names: XNNPACK's steps with the
// implementation they chose, where it says more than "xnnpack" (an int8
// layer's "qc8" or "f32-sums", int8 max pooling's "s8").
std::vector<std::string> ProfileKernels(const Executor& ex) {
  std::vector<std::string> k = ex.step_kernels();
  for (size_t i = 0; i < k.size() && i < ex.step_impls().size(); ++i)
    if (k[i] == "xnnpack" && !ex.step_impls()[i].empty())
      k[i] += " " + ex.step_impls()[i];
  return k;
}

StatusOr<Timed> TimeRuns(const InferArgs& a, const Graph& g, Executor* ex,
                         const std::vector<Tensor>& inputs) {
  Timed t;
  if (a.repeat > 1) RETURN_IF_ERROR(ex->Run(inputs, &t.outputs));  // warm-up
  for (int i = 0; i < a.repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(ex->Run(inputs, &t.outputs));
    t.ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0)
                       .count());
  }
  if (a.profile) {
    std::vector<double> step_seconds;
    for (int i = 0; i < a.repeat; ++i) {
      RETURN_IF_ERROR(ex->Run(inputs, &t.outputs, &step_seconds,
                              Executor::StepClock::kWall));
    }
    t.profile = ProfileByOp(g, ex->step_labels(), ProfileKernels(*ex),
                            step_seconds, a.repeat);
  }
  return t;
}

nlohmann::json ProfileJson(const OpProfile& profile, int runs, int top_steps) {
  nlohmann::json ops = nlohmann::json::array(), steps = nlohmann::json::array();
  for (const auto& r : profile.ops) {
    ops.push_back({{"op", r.op},
                   {"kernel", r.kernel},
                   {"steps", r.steps},
                   {"ms", r.seconds * 1e3}});
  }
  for (size_t i = 0;
       i < profile.steps.size() && static_cast<int>(i) < top_steps; ++i) {
    const auto& s = profile.steps[i];
    steps.push_back({{"step", s.label},
                     {"op", s.op},
                     {"kernel", s.kernel},
                     {"ms", s.seconds * 1e3}});
  }
  return {{"clock", "wall"},
          {"runs", runs},
          {"total_ms", profile.total_seconds * 1e3},
          {"ops", ops},
          {"slowest_steps", steps}};
}

// An XNNPACK executor's int8 layers by path (engine/xnnpack/int8_layer.h).
struct XnnInt8Paths {
  int qc8 = 0, f32_sums = 0;
  std::string Name() const {
    if (f32_sums == 0) return "xnnpack qc8";
    if (qc8 == 0) return "xnnpack f32 sums";
    return "xnnpack qc8 + f32 sums";
  }
};

XnnInt8Paths CountXnnInt8Paths(const Executor& ex) {
  XnnInt8Paths p;
  for (size_t i = 0; i < ex.step_impls().size(); ++i) {
    if (ex.step_kernels()[i] != "xnnpack") continue;
    p.qc8 += ex.step_impls()[i] == "qc8";
    p.f32_sums += ex.step_impls()[i] == "f32-sums";
  }
  return p;
}

constexpr const char* kXnnInt8Why =
    "qc8 where a layer's output only goes on to the next QuantizeLinear "
    "(through Relu/Clip, MaxPool, Reshape): within one quantization step; "
    "f32 sums elsewhere: exact";

// Why an executor's int8 layers took `path` (engine/int8_path.h).
std::string Int8PathWhy(Int8Path path) {
  if (path == Int8PathOnThisCpu()) return Int8PathReason();
  return "chosen by the caller";
}

// The names of a classifier's `n` classes: the model's own (its metadata),
// else ImageNet's for 1000 outputs, else none.
std::vector<std::string> ClassNames(const std::vector<std::string>& own,
                                    size_t n) {
  if (own.size() == n) return own;
  if (n != kImagenetClasses) return {};
  const auto& names = ImagenetClassNames();
  return std::vector<std::string>(names.begin(), names.end());
}

bool IsClassifier(const Tensor& y) {
  return y.shape.size() == 2 && y.shape[0] == 1 && y.shape[1] > 1;
}

// The indices of the k highest scores, highest first.
std::vector<int> TopK(const Tensor& y, size_t k) {
  std::vector<int> idx(y.data.size());
  std::iota(idx.begin(), idx.end(), 0);
  k = std::min(k, idx.size());
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(),
                    [&y](int p, int q) { return y.data[p] > y.data[q]; });
  idx.resize(k);
  return idx;
}

// A classifier's top five classes, with their names where known (the
// model's own, or ImageNet's for 1000 outputs); any other output, its
// range and mean.
void PrintOutput(const InferArgs& a, const Tensor& y,
                 const std::vector<std::string>& own_names,
                 bool own_names_used) {
  if (!IsClassifier(y)) {
    auto [lo_it, hi_it] = std::minmax_element(y.data.begin(), y.data.end());
    double sum = std::accumulate(y.data.begin(), y.data.end(), 0.0);
    std::cout << "output: min " << *lo_it << ", max " << *hi_it << ", mean "
              << sum / y.data.size() << "\n";
    return;
  }
  const std::vector<int> idx = TopK(y, 5);
  const std::vector<std::string> names = ClassNames(own_names, y.data.size());
  std::cout << "top-" << idx.size() << " classes (index"
            << (names.empty()    ? ""
                : own_names_used ? " and the model's name"
                                 : " and ImageNet name")
            << ": score):\n";
  for (int i : idx) {
    std::cout << "  " << std::setw(5) << i;
    if (!names.empty()) std::cout << " " << names[i];
    std::cout << ": " << y.data[i] << "\n";
  }
  if (Zoo::Global().Find(a.model) != nullptr) {
    std::cout << "  (" << a.model
              << " has seeded random weights, not trained ones: these "
                 "classes mean nothing; an .onnx file brings its own)\n";
  }
}

Status RunInfer(const InferArgs& a) {
  ASSIGN_OR_RETURN(Backend backend, ParseBackend(a.backend));
  if (a.repeat < 1) return InvalidArgument("--repeat must be at least 1");
  if (a.threads < 0) return InvalidArgument("--threads must be positive");
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  lo.with_weights = true;
  lo.seed = a.weight_seed;
  ModelMetadata metadata;
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo, &metadata));
  auto stated_names = ClassNamesOf(metadata);
  if (!stated_names.ok()) return stated_names.status().WithContext(a.model);
  const std::vector<std::string> own_names = *stated_names;
  if (m.graph.inputs.size() != 1) {
    return Unsupported("shoal infer feeds models with one input; '" + a.model +
                       "' has " + std::to_string(m.graph.inputs.size()));
  }
  std::string quantized;
  if (a.dtype.int8()) {
    ASSIGN_OR_RETURN(QuantizedSummary q,
                     QuantizeModel(a.dtype.calibration, &m));
    quantized = q.Text();
  }
  // A QDQ model (quantized here or by `shoal quantize`) runs int8
  // whatever --dtype said: its Q/DQ pairs are what makes it int8.
  const bool qdq = std::any_of(
      m.graph.nodes.begin(), m.graph.nodes.end(),
      [](const Node& n) { return QuantRoleOf(&n) != QuantRole::kNone; });
  const std::string dtype = qdq ? "int8" : a.dtype.dtype;
  const Shape in_shape = m.graph.FindTensor(m.graph.inputs[0])->shape;
  ASSIGN_OR_RETURN(Tensor input, InferInput(a, m, metadata, in_shape));

  ExecutorOptions eo;
  eo.backend = backend;
  eo.threads = a.threads;
  ASSIGN_OR_RETURN(auto ex,
                   Executor::Create(m.graph, std::move(m.weights), eo));
  const std::vector<Tensor> inputs = {std::move(input)};
  ASSIGN_OR_RETURN(Timed t, TimeRuns(a, m.graph, ex.get(), inputs));
  if (!a.output.empty()) RETURN_IF_ERROR(WriteNpy(a.output, t.outputs[0]));
  const Tensor& y = t.outputs[0];
  const double median = Quantile(t.ms, 0.5), p90 = Quantile(t.ms, 0.9),
               min = *std::min_element(t.ms.begin(), t.ms.end());
  if (a.json) {
    nlohmann::json j = {
        {"model", m.graph.name},
        {"backend", BackendName(backend)},
        {"dtype", dtype},
        {"threads", KernelThreads()},
        {"output_shape", y.shape},
        {"latency_ms", {{"median", median}, {"p90", p90}, {"min", min}}},
        {"peak_rss_bytes", PeakRssBytes()},
        {"arena_bytes", ex->stats().arena_bytes},
        {"weight_bytes", ex->stats().onednn_weight_bytes +
                             ex->stats().xnnpack_weight_bytes +
                             ex->stats().retained_weight_bytes}};
    const ExecutorStats& st = ex->stats();
    std::string int8_path = Int8PathName(st.int8_path);
    if (st.int8_layers > 0 && backend == Backend::kXnnpack) {
      const XnnInt8Paths p = CountXnnInt8Paths(*ex);
      int8_path = p.Name();
      j["int8"] = {{"layers", st.int8_layers},
                   {"path", int8_path},
                   {"qc8", p.qc8},
                   {"f32_sums", p.f32_sums},
                   {"why", kXnnInt8Why}};
    } else if (st.int8_layers > 0) {
      j["int8"] = {{"layers", st.int8_layers},
                   {"path", int8_path},
                   {"why", Int8PathWhy(st.int8_path)}};
    }
    if (IsClassifier(y)) {
      const auto names = ClassNames(own_names, y.data.size());
      nlohmann::json top = nlohmann::json::array();
      for (int i : TopK(y, 5)) {
        nlohmann::json c = {{"index", i}, {"score", y.data[i]}};
        if (!names.empty()) c["name"] = names[i];
        top.push_back(c);
      }
      j["top_classes"] = top;
    }
    if (a.profile) {
      j["profile"] = ProfileJson(t.profile, a.repeat, a.top_steps);
      if (st.int8_layers > 0) j["profile"]["int8_path"] = int8_path;
    }
    std::cout << j.dump(2) << std::endl;
    return Status::Ok();
  }
  std::cout << "model " << m.graph.name << ", " << dtype << ", backend "
            << BackendName(backend) << ", " << Plural(KernelThreads(), "thread")
            << ", output " << ShapeToString(y.shape) << "\n";
  if (!quantized.empty()) std::cout << "int8: " << quantized << "\n";
  if (ex->stats().int8_layers > 0 && backend == Backend::kXnnpack) {
    const XnnInt8Paths p = CountXnnInt8Paths(*ex);
    std::cout << "int8 layers on XNNPACK: " << ex->stats().int8_layers << ", "
              << p.qc8 << " qc8 and " << p.f32_sums << " f32 sums ("
              << kXnnInt8Why << ")\n";
  } else if (ex->stats().int8_layers > 0) {
    std::cout << "int8 layers on oneDNN: " << ex->stats().int8_layers << ", on "
              << Int8PathName(ex->stats().int8_path) << " ("
              << Int8PathWhy(ex->stats().int8_path) << ")\n";
  }
  PrintOutput(a, y, own_names, own_names.size() == y.data.size());
  std::cout << std::fixed << std::setprecision(3);
  if (a.repeat > 1) {
    std::cout << "latency over " << a.repeat << " runs: median " << median
              << " ms, p90 " << p90 << " ms, min " << min << " ms\n";
  } else {
    std::cout << "latency " << median << " ms\n";
  }
  std::cout << "peak RSS " << HumanBytes(PeakRssBytes()) << ", weights "
            << HumanBytes(ex->stats().onednn_weight_bytes +
                          ex->stats().xnnpack_weight_bytes +
                          ex->stats().retained_weight_bytes)
            << ", activation arena " << HumanBytes(ex->stats().arena_bytes)
            << "\n";
  if (a.profile) {
    std::cout << "time by op (wall clock, mean of " << a.repeat
              << (a.repeat == 1 ? " run" : " runs")
              << ", each step timed alone):\n"
              << OpProfileText(t.profile, a.top_steps);
  }
  return Status::Ok();
}

}  // namespace

void AddInferCommand(CLI::App* app) {
  auto a = std::make_shared<InferArgs>();
  auto* cmd = app->add_subcommand("infer", "Run a model on this device");
  cmd->add_option("model", a->model, "Zoo name or path to an .onnx file")
      ->required();
  cmd->add_option("--input", a->input, "Input tensor (.npy, float32)");
  cmd->add_option("--image", a->image,
                  "Input image (PNG, JPEG, BMP), resized and normalised");
  cmd->add_option("--input-seed", a->random_seed,
                  "Random normal input with this seed");
  cmd->add_option("--output", a->output, "Write the output tensor (.npy)");
  cmd->add_option("--backend", a->backend,
                  "onednn, xnnpack or reference (default: xnnpack on arm64, "
                  "onednn elsewhere)");
  cmd->add_option("--threads", a->threads,
                  "Kernel threads (default: all cores)");
  cmd->add_option("--repeat", a->repeat,
                  "Timed runs (after one warm-up when > 1)");
  cmd->add_option("--input-shape", a->input_shape, "Override the input shape");
  cmd->add_option("--weights-seed", a->weight_seed,
                  "Seed of zoo models' random weights");
  cmd->add_option("--mean", a->mean,
                  "Per-channel mean for --image (default: the model's "
                  "metadata, else ImageNet's)")
      ->delimiter(',');
  cmd->add_option("--std", a->std,
                  "Per-channel std for --image (default: the model's "
                  "metadata, else ImageNet's)")
      ->delimiter(',');
  AddDtypeFlags(cmd, &a->dtype);
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->add_flag("--profile", a->profile,
                "Also time each step: where the time goes, by op and kernel "
                "(the slowest steps too)");
  cmd->add_option("--top", a->top_steps,
                  "With --profile: how many of the slowest steps to list")
      ->check(CLI::NonNegativeNumber);
  cmd->callback([a] { throw CommandExit(ReportStatus(RunInfer(*a))); });
}

}  // namespace shoal
