// Turns a graph into a list of steps over "values" (a tensor in one memory
// layout). Kernels of either backend add steps here; the builder inserts
// reorders where a consumer needs another layout than its producer made, so
// oneDNN's blocked layouts flow between oneDNN ops and plain layout appears
// only at reference kernels and at the graph's edges.
#ifndef SHOAL_ENGINE_EXEC_BUILDER_H_
#define SHOAL_ENGINE_EXEC_BUILDER_H_

#include <map>
#include <memory>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <set>
#include <string>
#include <vector>

#include "engine/int8_path.h"
#include "engine/shared_weights.h"
#include "graph/graph.h"
#include "graph/weights.h"
#include "util/status.h"

struct pthreadpool;  // <pthreadpool.h>

namespace shoal {

using dnnl::memory;
struct XnnOperator;  // engine/xnnpack/xnn_step.h

// A tensor in one layout. Several values may share a storage (aliases such
// as Reshape of a plain tensor).
struct Value {
  std::string name;
  Shape shape;
  memory::desc md;
  int storage = -1;
};

struct Storage {
  int64_t bytes = 0;
  int64_t offset = 0;  // in the arena, after planning
  int first = 0, last = 0;
  bool graph_output = false;
};

// What a step needs at run time: the arena, oneDNN's stream and
// XNNPACK's thread pool (null: XNNPACK runs on the calling thread).
struct RunContext {
  char* arena = nullptr;
  dnnl::stream* stream = nullptr;
  pthreadpool* threadpool = nullptr;
};

class Step {
 public:
  virtual ~Step() = default;
  // Called once after memory planning, with the value pointers fixed.
  virtual Status Bind(const std::vector<void*>& value_ptrs) = 0;
  virtual Status Run(RunContext& ctx) = 0;
  // oneDNN primitives run with a user scratchpad (so that one built on one
  // thread can run on another, and devices run concurrently): the executor
  // gives every step one shared buffer of the largest size asked for.
  virtual int64_t scratchpad_bytes() const { return 0; }
  virtual void BindScratchpad(void* /*buffer*/) {}
  std::vector<int> reads, writes;  // value ids
  std::string label;               // node name, or "reorder <tensor>"
  int64_t weight_bytes = 0;        // constant data the step holds
  int shared_weights = 0;          // weights another executor holds for it
  // Which kernel does the work: a oneDNN primitive (reorders included),
  // XNNPACK operators, or the reference kernel. A profile names the ops
  // left to the reference.
  bool reference = false;
  bool xnnpack = false;
  const char* kernel() const {
    return reference ? "reference" : xnnpack ? "xnnpack" : "onednn";
  }
  // The implementation a step took, where its kernel has more than one:
  // oneDNN's name for what it chose ("jit:avx2", "gemm:ref", "ref:any"; on
  // arm64 its reference loops are what must not run the MACs,
  // docs/engine.md), or an XNNPACK quantized layer's path ("qc8", "f32-sums",
  // "s8" for its pooling on int8 values). Empty for the reference kernel
  // and XNNPACK's f32 steps.
  std::string impl;
  bool int8_layer = false;  // a quantized layer (int8_pattern.h)
};

// The copies a SharedWeights holds: for each key (what the data is), the
// layouts made of it, each with the plain layout it was read in (the same
// data read as [K, N] or as [N, K] is not the same weight).
struct SharedWeights::Impl {
  struct Copy {
    memory::desc plain, md;
    memory mem;
  };
  mutable std::mutex mu;
  // The copies' own engine: an executor's goes with it, and the copies
  // outlive the executor that asked first.
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  std::map<std::string, std::vector<Copy>> by_key;
  // XNNPACK operators, which hold their weights packed: by the weights'
  // keys and the operator's parameters.
  std::map<std::string, std::shared_ptr<XnnOperator>> xnn_ops;
  int64_t bytes = 0;
};

memory::desc PlainDesc(const Shape& shape);
bool IsPlain(const memory::desc& md, const Shape& shape);

class ExecBuilder {
 public:
  ExecBuilder(const Graph& g, WeightStore* weights, dnnl::engine* eng,
              bool use_onednn);

  const Graph& graph() const { return g_; }
  dnnl::engine& engine() { return *eng_; }
  bool use_onednn() const { return use_onednn_; }
  // How quantized layers compute (never kAuto: resolved for this CPU).
  Int8Path int8_path() const { return int8_path_; }
  void set_int8_path(Int8Path p) { int8_path_ = ResolveInt8Path(p); }

  // Value currently holding graph tensor `name`.
  int ValueOf(const std::string& name) const;
  const Value& value(int id) const { return values_[id]; }
  // Binds graph tensor `name` to a value (the producer's output).
  void Define(const std::string& name, int value_id) {
    value_of_[name] = value_id;
  }

  int NewValue(const std::string& name, const Shape& shape,
               const memory::desc& md);
  int AliasValue(int src, const std::string& name, const Shape& shape,
                 const memory::desc& md);
  // The value in layout `md` (a reorder step is added once per pair).
  int InLayout(int value_id, const memory::desc& md);
  int Plain(int value_id) {
    return InLayout(value_id, PlainDesc(values_[value_id].shape));
  }

  // Makes the step that copies a value into another layout, or returns
  // nullptr to leave it to oneDNN's reorder (the XNNPACK backend's own
  // transpose, which runs on its thread pool).
  using LayoutStepFn = std::unique_ptr<Step> (*)(const Value& src,
                                                 const memory::desc& dst);
  void set_layout_step(LayoutStepFn fn) { layout_step_ = fn; }

  void AddStep(std::unique_ptr<Step> step) {
    steps_.push_back(std::move(step));
  }

  // Weight data of a weight tensor; nullptr if the graph has no data for it.
  const Tensor* Weight(const std::string& name) const;
  // Reordered weights are shared through `shared` for the weights `keys`
  // names (weight tensor -> what its data is).
  void ShareWeights(SharedWeights* shared,
                    std::map<std::string, std::string> keys) {
    shared_ = shared;
    weight_keys_ = std::move(keys);
  }
  SharedWeights* shared_weights() const { return shared_; }
  // What weight `name`'s data is, or nullptr when it is not shared.
  const std::string* WeightKey(const std::string& name) const {
    auto it = weight_keys_.find(name);
    return shared_ && it != weight_keys_.end() ? &it->second : nullptr;
  }
  // A reference step points at this weight's plain data: keep it.
  void RetainWeight(const std::string& name) { retained_.insert(name); }
  // `node` was built by oneDNN, which copied its weights into the layouts
  // its primitives chose: plain data no other node still needs is dropped
  // now, so the process never holds a weight twice (nor does its peak RSS).
  void ReleaseWeights(const Node& node);
  // Drops every weight no reference step retained; returns the bytes kept.
  int64_t DropUnretainedWeights();
  // The sole consumer of `tensor`, or nullptr (several, none, graph output).
  const Node* SoleConsumer(const std::string& tensor) const;
  // Every node that reads `tensor`, each once, in graph order.
  std::vector<const Node*> Consumers(const std::string& tensor) const;
  bool IsGraphOutput(const std::string& tensor) const;
  // Marks a node as done by another node's step (a fused activation).
  void MarkFused(const std::string& node_name) { fused_.insert(node_name); }
  bool IsFused(const std::string& node_name) const {
    return fused_.count(node_name) != 0;
  }

  std::vector<Value>& values() { return values_; }
  std::vector<Storage>& storages() { return storages_; }
  std::vector<std::unique_ptr<Step>>& steps() { return steps_; }

 private:
  const Graph& g_;
  WeightStore* weights_;
  dnnl::engine* eng_;
  bool use_onednn_;
  Int8Path int8_path_ = ResolveInt8Path(Int8Path::kAuto);
  std::vector<Value> values_;
  std::vector<Storage> storages_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::map<std::string, int> value_of_;
  std::map<std::pair<int, std::string>, int> layout_cache_;
  std::set<std::string> fused_;
  std::set<std::string> retained_;
  std::map<std::string, int> weight_readers_;  // nodes yet to be built
  std::map<std::string, std::vector<const Node*>> consumers_;
  SharedWeights* shared_ = nullptr;
  std::map<std::string, std::string> weight_keys_;
  LayoutStepFn layout_step_ = nullptr;
};

// A backend's attempt at one node: adds its steps and returns true, or
// returns false to let the next implementation (finally the reference
// kernel) take it. First implementation that accepts wins (oneDNN style).
using NodeBuilderFn = StatusOr<bool> (*)(ExecBuilder& b, const Node& node);

class OneDnnKernelRegistry {
 public:
  static OneDnnKernelRegistry& Global();
  int Register(const std::string& op, NodeBuilderFn fn);
  NodeBuilderFn Find(const std::string& op) const;
  std::vector<std::string> Ops() const;

 private:
  std::map<std::string, NodeBuilderFn> fns_;
};

#define SHOAL_REGISTER_ONEDNN_KERNEL(op, fn)                                  \
  static int SHOAL_CONCAT(shoal_dnnl_kernel_, __COUNTER__) [[maybe_unused]] = \
      ::shoal::OneDnnKernelRegistry::Global().Register(op, fn)

}  // namespace shoal

#endif  // SHOAL_ENGINE_EXEC_BUILDER_H_
