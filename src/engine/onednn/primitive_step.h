// A step that executes one oneDNN primitive. Activation arguments are values
// bound to the arena; weights are memories the step owns, reordered once at
// build time into the layout the primitive chose.
#ifndef SHOAL_ENGINE_ONEDNN_PRIMITIVE_STEP_H_
#define SHOAL_ENGINE_ONEDNN_PRIMITIVE_STEP_H_

#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/exec_builder.h"

namespace shoal {

// A weight in the layout a primitive chose; `shared`: another executor
// made it and holds it (SharedWeights).
struct FixedWeight {
  memory mem;
  bool shared = false;
};

// Weight `name` of b's graph, read in layout `plain`, in layout `md`: the
// copy an executor sharing b's SharedWeights already made of the same
// data, else reordered now (and offered to the others).
FixedWeight WeightInLayout(ExecBuilder& b, const std::string& name,
                           const memory::desc& plain, const memory::desc& md);

class PrimitiveStep : public Step {
 public:
  PrimitiveStep(dnnl::engine* eng, dnnl::primitive prim);

  void AddInput(int arg, int value, const memory::desc& md) {
    value_args_.push_back({arg, value, md});
    reads.push_back(value);
  }
  void AddOutput(int arg, int value, const memory::desc& md) {
    value_args_.push_back({arg, value, md});
    writes.push_back(value);
  }
  void AddFixed(int arg, memory m) {
    weight_bytes += static_cast<int64_t>(m.get_desc().get_size());
    args_[arg] = std::move(m);
  }
  // A weight another executor may hold (WeightInLayout): its bytes count
  // only where it was made.
  void AddFixed(int arg, FixedWeight w) {
    if (w.shared)
      ++shared_weights;
    else
      weight_bytes += static_cast<int64_t>(w.mem.get_desc().get_size());
    args_[arg] = std::move(w.mem);
  }

  Status Bind(const std::vector<void*>& ptrs) override;
  Status Run(RunContext& ctx) override;
  int64_t scratchpad_bytes() const override;
  void BindScratchpad(void* buffer) override;

 private:
  struct ValueArg {
    int arg;
    int value;
    memory::desc md;
  };
  dnnl::engine* eng_;
  dnnl::primitive prim_;
  std::vector<ValueArg> value_args_;
  std::unordered_map<int, memory> args_;
  memory::desc scratchpad_md_;
};

// Attributes every shoal primitive starts from: a user-provided scratchpad.
dnnl::primitive_attr ScratchpadAttr();
// oneDNN's name for the implementation behind `prim` (Step::impl).
std::string ImplName(const dnnl::primitive& prim);
// The scratchpad a primitive built with ScratchpadAttr() needs.
memory::desc ScratchpadDesc(const dnnl::primitive& prim);

// Copies plain f32 data into a new memory of layout `md` (one-off reorder).
memory ReorderedWeights(dnnl::engine& eng, const float* data,
                        const memory::desc& plain, const memory::desc& md);

// Plain descriptor with explicit dims and row-major strides.
memory::desc PlainDims(const memory::dims& dims,
                       memory::data_type dt = memory::data_type::f32);

// Appends activation node `c` to `po` as oneDNN eltwise post-ops (one, or
// two for HardSigmoid: a line, then a clip to [0, 1]); false if `c` is not
// an activation oneDNN can apply so.
bool AppendActivation(const Node& c, dnnl::post_ops* po);

// SiLU as torch.onnx writes it, Mul(x, Sigmoid(x)), when `tensor` is x and
// those two nodes are all that read it: returns the Mul, else nullptr.
const Node* SwishOf(ExecBuilder& b, const std::string& tensor);

// If the sole reader of `tensor` is a fusable activation (or `tensor` feeds
// SwishOf's pattern), appends it to `attr`'s post-ops as eltwise post-ops
// (after those it has) and returns the node whose output is the result;
// else nullptr.
const Node* FuseActivation(ExecBuilder& b, const std::string& tensor,
                           dnnl::primitive_attr* attr);

// Gives `step` its output value (layout `dst`), adds it, and binds node
// `n`'s output (and the fused activation's, which is then skipped) to it.
void AddFusedOutputStep(ExecBuilder& b, const Node& n, const Node* act,
                        std::unique_ptr<PrimitiveStep> step, const Shape& shape,
                        const memory::desc& dst);

// Builds a primitive descriptor, turning oneDNN's exceptions into Status.
template <typename F>
auto TryDnnl(F&& f) -> StatusOr<decltype(f())> {
  try {
    return f();
  } catch (const dnnl::error& e) {
    return Unsupported(std::string("oneDNN: ") + e.what());
  }
}

}  // namespace shoal

#endif  // SHOAL_ENGINE_ONEDNN_PRIMITIVE_STEP_H_
