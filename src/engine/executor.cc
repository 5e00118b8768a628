#include "engine/executor.h"

#include <omp.h>
#include <time.h>

#include <cstring>
#include <set>

#include "engine/exec_builder.h"
#include "engine/int8_reference_step.h"
#include "engine/memory_plan.h"
#include "engine/onednn/int8_pattern.h"
#include "engine/reference_step.h"
#include "engine/shared_arena.h"
#include "engine/shared_weights.h"
#include "engine/xnnpack/xnn_step.h"
#include "graph/fuse_batchnorm.h"
#include "graph/verify.h"

namespace shoal {

StatusOr<Backend> ParseBackend(const std::string& name) {
  if (name == "onednn") return Backend::kOneDnn;
  if (name == "reference") return Backend::kReference;
  if (name == "xnnpack") return Backend::kXnnpack;
  return InvalidArgument("unknown backend '" + name +
                         "' (onednn, xnnpack or reference)");
}

const char* BackendName(Backend b) {
  switch (b) {
    case Backend::kOneDnn:
      return "onednn";
    case Backend::kXnnpack:
      return "xnnpack";
    case Backend::kReference:
      break;
  }
  return "reference";
}

void SetKernelThreads(int threads) {
  omp_set_num_threads(threads > 0 ? threads : omp_get_num_procs());
}

int KernelThreads() { return omp_get_max_threads(); }

namespace {

// CPU time rather than wall time: under a CPU quota a step's wall time
// includes the throttling that earlier steps ran into; the process's, so
// that kernel threads count.
double ProcessCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

double WallSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

}  // namespace

// The keys of the weights as the BN-folded graph holds them. A conv that
// took in a BatchNormalization holds weights computed from the conv's and
// the BN's, changed in place under the conv's names, so their key names
// them all; a conv whose inputs are not all keyed is not shared.
std::map<std::string, std::string> FoldedWeightKeys(
    const Graph& original, const Graph& folded,
    std::map<std::string, std::string> keys) {
  auto key_of = [&](const std::vector<std::string>& names, size_t from,
                    std::string* out) {
    for (size_t i = from; i < names.size(); ++i) {
      if (names[i].empty()) continue;
      auto it = keys.find(names[i]);
      if (it == keys.end()) return false;
      *out += it->second + ",";
    }
    return true;
  };
  std::map<std::string, std::string> derived;
  std::set<std::string> unkeyed;
  for (const Node& bn : original.nodes) {
    if (bn.op != "BatchNormalization" || folded.FindNode(bn.name)) continue;
    const int c = original.ProducerIndex(bn.inputs[0]);
    if (c < 0) continue;
    const Node& conv = original.nodes[c];
    const Node* now = folded.FindNode(conv.name);
    if (now == nullptr) continue;
    std::string key = "folded(";
    const bool known =
        key_of(conv.inputs, 1, &key) && key_of(bn.inputs, 1, &key);
    key += "eps=" + std::to_string(bn.attrs.GetFloat("epsilon", 1e-5f)) + ")";
    for (size_t i = 1; i < now->inputs.size(); ++i) {
      if (now->inputs[i].empty()) continue;
      if (known)
        derived[now->inputs[i]] = key + "#" + std::to_string(i);
      else
        unkeyed.insert(now->inputs[i]);
    }
  }
  for (const auto& name : unkeyed) keys.erase(name);
  for (auto& [name, key] : derived) keys[name] = key;
  return keys;
}

struct Executor::Impl {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  std::shared_ptr<SharedWeights> shared;  // outlives the steps' views
  dnnl::stream stream{eng};
  WeightStore weights;
  std::vector<Value> values;
  std::vector<Storage> storages;
  std::vector<std::unique_ptr<Step>> steps;
  std::vector<int> input_values, output_values;
  std::vector<Shape> input_shapes;
  std::vector<std::string> input_names;
  char* arena = nullptr;
  char* scratchpad = nullptr;
  int64_t scratchpad_bytes = 0;  // the most any step asks for
  std::vector<void*> ptrs;
  // Where `arena` and `scratchpad` live: one of the executor's own, or
  // one it shares with executors that never run at the same time; bound
  // at the generation below, and again when it grows.
  std::shared_ptr<SharedArena> buffers;
  int64_t bound_generation = -1;
  // XNNPACK's workers (null: its steps run on the calling thread).
  ThreadpoolPtr threadpool;

  // Points every value and step at the buffers as they are now.
  Status Bind() {
    arena = buffers->arena();
    scratchpad = buffers->scratchpad();
    ptrs.clear();
    for (const auto& v : values)
      ptrs.push_back(arena + storages[v.storage].offset);
    for (auto& step : steps) RETURN_IF_ERROR(step->Bind(ptrs));
    if (scratchpad_bytes > 0)
      for (auto& step : steps) step->BindScratchpad(scratchpad);
    bound_generation = buffers->generation();
    return Status::Ok();
  }
};

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>> Executor::Create(
    const Graph& g, WeightStore weights, const ExecutorOptions& opts) {
  SetKernelThreads(opts.threads);
  auto impl = std::make_unique<Impl>();
  RETURN_IF_ERROR(CheckWeights(g, weights));
  const bool xnnpack = opts.backend == Backend::kXnnpack;
  if (xnnpack) {
    RETURN_IF_ERROR(InitXnnpack());
    impl->threadpool = MakeThreadpool(opts.threads);
  }
  // oneDNN and XNNPACK run Conv + BN as one conv with folded weights (one
  // pass over the activation instead of two). The reference backend keeps
  // BN as it is: it is the oracle the folded graph is checked against.
  Model folded;
  int folded_bns = 0;
  if (opts.backend != Backend::kReference && HasFoldableBatchNorm(g)) {
    folded.graph = g;
    folded.weights = std::move(weights);
    ASSIGN_OR_RETURN(folded_bns, FuseBatchNorm(&folded));
    RETURN_IF_ERROR(VerifyGraph(folded.graph));
    impl->weights = std::move(folded.weights);
  } else {
    impl->weights = std::move(weights);
  }
  const Graph& graph = folded_bns > 0 ? folded.graph : g;
  ExecBuilder b(graph, &impl->weights, &impl->eng,
                opts.backend == Backend::kOneDnn);
  b.set_int8_path(opts.int8_path);
  if (xnnpack) b.set_layout_step(NhwcTransposeStepFor);
  if (opts.shared_weights) {
    impl->shared = opts.shared_weights;
    b.ShareWeights(impl->shared.get(),
                   folded_bns > 0 ? FoldedWeightKeys(g, graph, opts.weight_keys)
                                  : opts.weight_keys);
  }

  for (const auto& in : graph.inputs) {
    const Shape& s = graph.FindTensor(in)->shape;
    int v = b.NewValue(in, s, PlainDesc(s));
    b.Define(in, v);
    impl->input_values.push_back(v);
    impl->input_shapes.push_back(s);
    impl->input_names.push_back(in);
  }
  if (b.use_onednn())
    MarkInt8Fusions(b);
  else
    MarkInt8RefFusions(b);
  int onednn_steps = 0, xnnpack_steps = 0, reference_steps = 0;
  for (const auto& node : graph.nodes) {
    if (b.IsFused(node.name)) continue;
    bool done = false;
    // XNNPACK's implementation first; what it declines runs on the
    // reference kernels (the int8 layers on integers, as with the
    // reference backend).
    if (xnnpack) {
      if (NodeBuilderFn fn = XnnpackKernelRegistry::Global().Find(node.op)) {
        size_t before = b.steps().size();
        ASSIGN_OR_RETURN(done, fn(b, node));
        if (done && b.steps().size() > before) ++xnnpack_steps;
        if (done) b.ReleaseWeights(node);
      }
    }
    if (b.use_onednn()) {
      if (NodeBuilderFn fn = OneDnnKernelRegistry::Global().Find(node.op)) {
        size_t before = b.steps().size();
        ASSIGN_OR_RETURN(done, fn(b, node));
        if (done && b.steps().size() > before) ++onednn_steps;
        if (done) b.ReleaseWeights(node);
      }
    }
    // The reference backend's quantized layers run on integers; oneDNN's
    // fallback stays f32 on the dequantized values (its int8 pattern took
    // whatever it could).
    if (!done && !b.use_onednn()) {
      ASSIGN_OR_RETURN(done, AddInt8ReferenceStep(b, node));
      if (done) ++reference_steps;
    }
    if (!done) {
      RETURN_IF_ERROR(AddReferenceStep(b, node));
      ++reference_steps;
    }
  }
  for (const auto& out : graph.outputs) {
    int v = b.ValueOf(out);
    if (v < 0) return Internal("graph output '" + out + "' has no value");
    impl->output_values.push_back(b.Plain(v));
  }

  const int64_t retained_weight_bytes = b.DropUnretainedWeights();
  impl->values = std::move(b.values());
  impl->storages = std::move(b.storages());
  impl->steps = std::move(b.steps());

  // Lifetimes by step index; inputs are written before step 0 and outputs
  // read after the last step.
  const int n_steps = static_cast<int>(impl->steps.size());
  for (auto& s : impl->storages) {
    s.first = n_steps + 1;
    s.last = -1;
  }
  auto touch = [&](int value, int step) {
    Storage& s = impl->storages[impl->values[value].storage];
    s.first = std::min(s.first, step);
    s.last = std::max(s.last, step);
  };
  for (int v : impl->input_values) touch(v, 0);
  for (int i = 0; i < n_steps; ++i) {
    for (int v : impl->steps[i]->reads) touch(v, i + 1);
    for (int v : impl->steps[i]->writes) touch(v, i + 1);
  }
  for (int v : impl->output_values) touch(v, n_steps + 1);
  std::vector<BufferLifetime> lifetimes;
  for (auto& s : impl->storages) {
    if (s.last < s.first) s.first = s.last = 0;  // never used
    lifetimes.push_back({s.bytes, s.first, s.last});
  }
  MemoryPlan plan = PlanMemory(lifetimes);
  for (size_t i = 0; i < impl->storages.size(); ++i)
    impl->storages[i].offset = plan.offsets[i];
  for (auto& step : impl->steps)
    impl->scratchpad_bytes =
        std::max(impl->scratchpad_bytes, step->scratchpad_bytes());
  impl->buffers =
      opts.shared_arena ? opts.shared_arena : std::make_shared<SharedArena>();
  // XNNPACK's kernels may read XNN_EXTRA_BYTES past an operand's end.
  if (xnnpack) plan.arena_bytes += XNN_EXTRA_BYTES;
  if (!impl->buffers->Reserve(plan.arena_bytes, impl->scratchpad_bytes))
    return Internal("cannot allocate the activation arena");
  // A shared arena is bound at the first run, once every executor sharing
  // it has grown it.
  if (!opts.shared_arena) RETURN_IF_ERROR(impl->Bind());

  auto ex = std::unique_ptr<Executor>(new Executor(std::move(impl)));
  ex->stats_.arena_bytes = plan.arena_bytes;
  ex->stats_.peak_live_bytes = plan.peak_live_bytes;
  ex->stats_.steps = n_steps;
  ex->stats_.onednn_steps = onednn_steps;
  ex->stats_.xnnpack_steps = xnnpack_steps;
  ex->stats_.reference_steps = reference_steps;
  ex->stats_.retained_weight_bytes = retained_weight_bytes;
  for (const auto& s : ex->impl_->steps) {
    (s->xnnpack ? ex->stats_.xnnpack_weight_bytes
                : ex->stats_.onednn_weight_bytes) += s->weight_bytes;
    ex->stats_.shared_weights += s->shared_weights;
    if (s->int8_layer) {
      ++ex->stats_.int8_layers;
      // The path is oneDNN's; an XNNPACK layer names its own in Step::impl
      // ("qc8", "f32-sums").
      if (!s->xnnpack) ex->stats_.int8_path = b.int8_path();
    }
  }
  ex->stats_.folded_batchnorms = folded_bns;
  for (const auto& s : ex->impl_->steps) {
    ex->labels_.push_back(s->label);
    ex->reference_.push_back(s->reference);
    ex->kernels_.push_back(s->kernel());
    ex->impls_.push_back(s->impl);
    if (s->label.rfind("reorder ", 0) == 0) ++ex->stats_.reorder_steps;
  }
  return ex;
}

Status Executor::Run(const std::vector<Tensor>& inputs,
                     std::vector<Tensor>* outputs,
                     std::vector<double>* step_seconds, StepClock clock) {
  Impl& m = *impl_;
  if (m.bound_generation != m.buffers->generation()) RETURN_IF_ERROR(m.Bind());
  if (inputs.size() != m.input_values.size()) {
    return InvalidArgument("the model takes " +
                           std::to_string(m.input_values.size()) +
                           " input(s), got " + std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].shape != m.input_shapes[i]) {
      return InvalidArgument("input '" + m.input_names[i] +
                             "' must have shape " +
                             ShapeToString(m.input_shapes[i]) + ", got " +
                             ShapeToString(inputs[i].shape));
    }
    std::memcpy(m.ptrs[m.input_values[i]], inputs[i].data.data(),
                inputs[i].data.size() * sizeof(float));
  }
  RunContext ctx{m.arena, &m.stream, m.threadpool.get()};
  if (step_seconds != nullptr) step_seconds->resize(m.steps.size(), 0.0);
  for (size_t i = 0; i < m.steps.size(); ++i) {
    auto now = [clock] {
      return clock == StepClock::kWall ? WallSeconds() : ProcessCpuSeconds();
    };
    const double c0 = step_seconds != nullptr ? now() : 0;
    Status s = m.steps[i]->Run(ctx);
    if (!s.ok()) return s.WithContext("step '" + m.steps[i]->label + "'");
    if (step_seconds != nullptr) {
      // The CPU stream runs in order; waiting makes the time the step's.
      m.stream.wait();
      (*step_seconds)[i] += now() - c0;
    }
  }
  m.stream.wait();
  outputs->clear();
  // Copied out in one pass: a Tensor of the shape would first zero what
  // the copy then overwrites, and a worker paces its task by the CPU it
  // used, so each byte of a strip's output touched twice costs an emulated
  // Pi twice.
  for (int v : m.output_values) {
    const float* p = static_cast<const float*>(m.ptrs[v]);
    outputs->emplace_back(
        m.values[v].shape,
        std::vector<float>(p, p + NumElements(m.values[v].shape)));
  }
  return Status::Ok();
}

}  // namespace shoal
