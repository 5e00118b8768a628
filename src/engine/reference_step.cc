#include "engine/reference_step.h"

#include <utility>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

class ReferenceStep : public Step {
 public:
  ReferenceStep(const Node& node, RefCall fn)
      : node_(node), fn_(std::move(fn)) {}

  // Per input: a value id, or a weight (value id -1).
  struct Arg {
    int value = -1;
    const Tensor* weight = nullptr;
  };
  std::vector<Arg> args;
  std::vector<Shape> out_shapes;
  std::vector<int> out_values;  // per node output; -1 when unnamed

  Status Bind(const std::vector<void*>& ptrs) override {
    in_.clear();
    out_.clear();
    for (size_t i = 0; i < args.size(); ++i) {
      const Arg& a = args[i];
      if (a.weight) {
        in_.push_back(ConstView{a.weight->data.data(), a.weight->shape});
      } else if (a.value >= 0) {
        in_.push_back(
            ConstView{static_cast<const float*>(ptrs[a.value]), in_shapes_[i]});
      } else {
        in_.push_back(ConstView{});
      }
    }
    // One view per node output; an unnamed output gets a null view.
    for (size_t i = 0; i < out_values.size(); ++i) {
      float* p = out_values[i] >= 0 ? static_cast<float*>(ptrs[out_values[i]])
                                    : nullptr;
      out_.push_back(MutView{p, out_shapes[i]});
    }
    return Status::Ok();
  }
  Status Run(RunContext&) override { return fn_(node_, in_, out_); }

  std::vector<Shape> in_shapes_;

 private:
  Node node_;
  RefCall fn_;
  std::vector<ConstView> in_;
  std::vector<MutView> out_;
};

}  // namespace

Status AddReferenceStep(ExecBuilder& b, const Node& node) {
  RefKernelFn fn = RefKernelRegistry::Global().Find(node.op);
  if (!fn) {
    return Unsupported("no kernel for op '" + node.op + "' (node '" +
                       node.name + "')");
  }
  return AddReferenceStep(b, node, node.inputs, fn);
}

Status AddReferenceStep(ExecBuilder& b, const Node& node,
                        const std::vector<std::string>& inputs,
                        RefCall kernel) {
  auto step = std::make_unique<ReferenceStep>(node, std::move(kernel));
  for (const auto& in : inputs) {
    ReferenceStep::Arg a;
    Shape shape;
    if (!in.empty()) {
      const TensorInfo* t = b.graph().FindTensor(in);
      if (t && t->is_weight()) {
        a.weight = b.Weight(in);
        if (!a.weight) return NotFound("weight '" + in + "' has no data");
        b.RetainWeight(in);
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
  ASSIGN_OR_RETURN(InputShapes in_shapes, GatherInputShapes(b.graph(), node));
  std::vector<Shape> shapes;
  RETURN_IF_ERROR(OpRegistry::Global().Find(node.op)->InferShapes(
      node, in_shapes, &shapes));
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const std::string& o = node.outputs[i];
    step->out_shapes.push_back(shapes[i]);
    if (o.empty()) {
      step->out_values.push_back(-1);
      continue;
    }
    int v = b.NewValue(o, shapes[i], PlainDesc(shapes[i]));
    step->writes.push_back(v);
    step->out_values.push_back(v);
    b.Define(o, v);
  }
  step->label = node.name;
  step->reference = true;
  b.AddStep(std::move(step));
  return Status::Ok();
}

}  // namespace shoal
