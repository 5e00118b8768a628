// The XNNPACK backend's common parts: the library's one-time setup, the
// thread pool, the registry of node builders, and the step that runs
// XNNPACK operators.
//
// XNNPACK computes on NHWC tensors; its steps keep 4-D activations in NHWC
// (NhwcDesc) and the builder's layout machinery (ExecBuilder::InLayout)
// inserts a reorder, once per (tensor, layout), where a step of another
// kernel reads them or writes what they read. XNNPACK packs a layer's
// weights into its own layout when the operator is created; the plain copy
// is then dropped (ExecBuilder::ReleaseWeights), so each weight is held
// once, as for oneDNN.
#ifndef SHOAL_ENGINE_XNNPACK_XNN_STEP_H_
#define SHOAL_ENGINE_XNNPACK_XNN_STEP_H_

#include <pthreadpool.h>
#include <xnnpack.h>

#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/exec_builder.h"

namespace shoal {

// Initialises XNNPACK once per process; an error (a CPU it cannot run on)
// names the reason.
Status InitXnnpack();

// A pool of `threads` workers for XNNPACK (0: all cores); null for one
// thread, which XNNPACK runs on the caller.
struct PthreadpoolDeleter {
  void operator()(pthreadpool* p) const { pthreadpool_destroy(p); }
};
using ThreadpoolPtr = std::unique_ptr<pthreadpool, PthreadpoolDeleter>;
ThreadpoolPtr MakeThreadpool(int threads);

const char* XnnStatusName(xnn_status s);

// One XNNPACK operator: its packed weights and the state of its last
// setup. Setup and run happen together under `mu`, so executors of one
// process can share an operator (and its packed weights) even when they
// run it on different buffers or input heights.
struct XnnOperator {
  explicit XnnOperator(xnn_operator_t o) : op(o) {}
  ~XnnOperator() { xnn_delete_operator(op); }
  XnnOperator(const XnnOperator&) = delete;
  XnnOperator& operator=(const XnnOperator&) = delete;
  xnn_operator_t op;
  std::mutex mu;
};

// Points an operator at this run's buffers: the step's input values'
// addresses, then its outputs', in the order they were added.
using XnnSetupFn = std::function<xnn_status(
    xnn_operator_t op, const std::vector<void*>& in,
    const std::vector<void*>& out, pthreadpool_t pool)>;

// Runs one or more XNNPACK operators in order (a Concat is one copy per
// input).
class XnnStep : public Step {
 public:
  XnnStep() { xnnpack = true; }
  void AddInput(int value) { reads.push_back(value); }
  void AddOutput(int value) { writes.push_back(value); }
  void AddCall(std::shared_ptr<XnnOperator> op, XnnSetupFn setup) {
    calls_.push_back({std::move(op), std::move(setup)});
  }
  // Constant data a call reads in place (XNNPACK does not copy the
  // operands of a binary operator): kept alive and counted here.
  const float* HoldConstant(std::vector<float> data);

  Status Bind(const std::vector<void*>& ptrs) override;
  Status Run(RunContext& ctx) override;

 private:
  struct Call {
    std::shared_ptr<XnnOperator> op;
    XnnSetupFn setup;
  };
  std::vector<Call> calls_;
  std::vector<void*> in_, out_;
  std::vector<std::unique_ptr<std::vector<float>>> constants_;
};

// Wraps the operator a create call wrote to `*op`, or declines (nullptr)
// when XNNPACK refused the parameters. A pointer: the create call, an
// argument of the same call, may run after the other arguments are read.
std::shared_ptr<XnnOperator> Wrap(xnn_status s, const xnn_operator_t* op);

// An operator holding packed weights, shared with other executors of the
// process (ExecutorOptions::shared_weights) when every weight in `weights`
// has a key (what its data is): `params` names everything else that went
// into it. `create` makes it when no executor has; `packed_bytes` is what
// its weights take, counted once, by the executor that made it.
struct SharedOperator {
  std::shared_ptr<XnnOperator> op;
  bool shared = false;
};
SharedOperator PackedOperator(
    ExecBuilder& b, const std::vector<std::string>& weights,
    const std::string& params, int64_t packed_bytes,
    const std::function<std::shared_ptr<XnnOperator>()>& create);

// The layout XNNPACK's steps keep a tensor in: NHWC for 4-D tensors, plain
// otherwise. Where NHWC and NCHW are the same bytes (H·W = 1, or C = 1)
// it is the plain layout, so no reorder is inserted there.
memory::desc NhwcDesc(const Shape& shape);
bool IsNhwc(const memory::desc& md, const Shape& shape);

// A step that transposes `src` between NCHW and NHWC on XNNPACK's thread
// pool, or nullptr when `dst` is not the other of the two
// (ExecBuilder::set_layout_step; oneDNN's reorder does the rest).
std::unique_ptr<Step> NhwcTransposeStepFor(const Value& src,
                                           const memory::desc& dst);

// The value of activation `name`, or -1 (a weight, or a tensor whose
// producer another step took over, such as a DQ the int8 reference layer
// reads through).
int ActivationValue(ExecBuilder& b, const std::string& name);

// An activation XNNPACK can apply as its operators' output range, when
// `tensor`'s sole reader is one: Relu [0, ∞) or Clip [min, max]. Returns
// that node (its output is then the step's) and sets the range; else
// nullptr and (−∞, ∞).
const Node* FusedClamp(ExecBuilder& b, const std::string& tensor, float* lo,
                       float* hi);

// Gives `step` its output value `y` (layout `md`) for node `n`, or for the
// fused activation `act`, labels it and adds it.
void AddXnnOutputStep(ExecBuilder& b, const Node& n, const Node* act,
                      std::unique_ptr<XnnStep> step, const Shape& shape,
                      const memory::desc& md);

class XnnpackKernelRegistry {
 public:
  static XnnpackKernelRegistry& Global();
  int Register(const std::string& op, NodeBuilderFn fn);
  NodeBuilderFn Find(const std::string& op) const;
  std::vector<std::string> Ops() const;

 private:
  std::map<std::string, NodeBuilderFn> fns_;
};

#define SHOAL_REGISTER_XNNPACK_KERNEL(op, fn)                                \
  static int SHOAL_CONCAT(shoal_xnn_kernel_, __COUNTER__) [[maybe_unused]] = \
      ::shoal::XnnpackKernelRegistry::Global().Register(op, fn)

constexpr float kNoMin = -std::numeric_limits<float>::infinity();
constexpr float kNoMax = std::numeric_limits<float>::infinity();

}  // namespace shoal

#endif  // SHOAL_ENGINE_XNNPACK_XNN_STEP_H_
