#include "engine/reference_step.h"

#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

class ReferenceStep : public Step {
 public:
  ReferenceStep(const Node& node, RefKernelFn fn) : node_(node), fn_(fn) {}

  // Per input: a value id, or a weight (value id -1).
  struct Arg {
    int value = -1;
    const Tensor* weight = nullptr;
  };
  std::vector<Arg> args;
  std::vector<Shape> out_shapes;

  Status Bind(const std::vector<void*>& ptrs) override {
    in_.clear();
    out_.clear();
    for (size_t i = 0; i < args.size(); ++i) {
      const Arg& a = args[i];
      if (a.weight) {
        in_.push_back(ConstView{a.weight->data.data(), a.weight->shape});
      } else if (a.value >= 0) {
        in_.push_back(ConstView{static_cast<const float*>(ptrs[a.value]), in_shapes_[i]});
      } else {
        in_.push_back(ConstView{});
      }
    }
    for (size_t i = 0; i < writes.size(); ++i)
      out_.push_back(MutView{static_cast<float*>(ptrs[writes[i]]), out_shapes[i]});
    return Status::Ok();
  }
  Status Run(RunContext&) override { return fn_(node_, in_, out_); }

  std::vector<Shape> in_shapes_;

 private:
  Node node_;
  RefKernelFn fn_;
  std::vector<ConstView> in_;
  std::vector<MutView> out_;
};

}  // namespace

Status AddReferenceStep(ExecBuilder& b, const Node& node) {
  RefKernelFn fn = RefKernelRegistry::Global().Find(node.op);
  if (!fn) {
    return Unsupported("no kernel for op '" + node.op + "' (node '" + node.name + "')");
  }
  auto step = std::make_unique<ReferenceStep>(node, fn);
  for (const auto& in : node.inputs) {
    ReferenceStep::Arg a;
    Shape shape;
    if (!in.empty()) {
      const TensorInfo* t = b.graph().FindTensor(in);
      if (t && t->is_weight()) {
        a.weight = b.Weight(in);
        if (!a.weight) return NotFound("weight '" + in + "' has no data");
        shape = t->shape;
      } else {
        int v = b.ValueOf(in);
        if (v < 0) return Internal("tensor '" + in + "' has no value");
        a.value = b.Plain(v);
        shape = b.value(a.value).shape;
        step->reads.push_back(a.value);
      }
    }
    step->args.push_back(a);
    step->in_shapes_.push_back(shape);
  }
  for (const auto& o : node.outputs) {
    if (o.empty()) continue;
    const Shape& s = b.graph().FindTensor(o)->shape;
    int v = b.NewValue(o, s, PlainDesc(s));
    step->writes.push_back(v);
    step->out_shapes.push_back(s);
    b.Define(o, v);
  }
  step->label = node.name;
  b.AddStep(std::move(step));
  return Status::Ok();
}

}  // namespace shoal
