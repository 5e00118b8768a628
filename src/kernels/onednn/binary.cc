// Add, Sub, Mul, Div on oneDNN's binary primitive: two activations of one
// shape (residual adds), the second brought into the first's layout.
#include "kernels/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildBinary(ExecBuilder& b, const Node& n) {
  dnnl::algorithm alg;
  if (n.op == "Add") alg = dnnl::algorithm::binary_add;
  else if (n.op == "Sub") alg = dnnl::algorithm::binary_sub;
  else if (n.op == "Mul") alg = dnnl::algorithm::binary_mul;
  else if (n.op == "Div") alg = dnnl::algorithm::binary_div;
  else return false;
  const int a = b.ValueOf(n.inputs[0]), c = b.ValueOf(n.inputs[1]);
  if (a < 0 || c < 0) return false;  // a weight operand: reference kernel
  const Value& av = b.value(a);
  if (av.shape != b.value(c).shape) return false;
  const int c2 = b.InLayout(c, av.md);
  dnnl::primitive_attr attr;
  dnnl::post_ops po;
  const Node* act = nullptr;
  dnnl::algorithm act_alg;
  float alpha, beta;
  if (FusableActivation(b, n.outputs[0], &act, &act_alg, &alpha, &beta)) {
    po.append_eltwise(1.f, act_alg, alpha, beta);
    attr.set_post_ops(po);
  }
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::binary::desc(alg, av.md, av.md, av.md);
    return dnnl::binary::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::binary(pd));
  step->AddInput(DNNL_ARG_SRC_0, a, av.md);
  step->AddInput(DNNL_ARG_SRC_1, c2, av.md);
  const std::string& out_name = act ? act->outputs[0] : n.outputs[0];
  int y = b.NewValue(out_name, av.shape, pd.dst_desc());
  step->AddOutput(DNNL_ARG_DST, y, pd.dst_desc());
  step->label = act ? n.name + "+" + act->op : n.name;
  b.AddStep(std::move(step));
  b.Define(n.outputs[0], y);
  if (act) {
    b.Define(act->outputs[0], y);
    b.MarkFused(act->name);
  }
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Add", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Sub", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Mul", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Div", BuildBinary);

}  // namespace
}  // namespace shoal
