// Add, Sub, Mul, Div on oneDNN's binary primitive: two activations of one
// shape (residual adds), the second brought into the first's layout.
#include "kernels/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildBinary(ExecBuilder& b, const Node& n) {
  dnnl::algorithm alg;
  if (n.op == "Add")
    alg = dnnl::algorithm::binary_add;
  else if (n.op == "Sub")
    alg = dnnl::algorithm::binary_sub;
  else if (n.op == "Mul")
    alg = dnnl::algorithm::binary_mul;
  else if (n.op == "Div")
    alg = dnnl::algorithm::binary_div;
  else
    return false;
  const int a = b.ValueOf(n.inputs[0]), c = b.ValueOf(n.inputs[1]);
  if (a < 0 || c < 0) return false;  // a weight operand: reference kernel
  // A copy: InLayout below may add values and move the vector.
  const Value av = b.value(a);
  if (av.shape != b.value(c).shape) return false;
  const int c2 = b.InLayout(c, av.md);
  dnnl::primitive_attr attr = ScratchpadAttr();
  const Node* act = FuseActivation(b, n.outputs[0], &attr);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::binary::desc(alg, av.md, av.md, av.md);
    return dnnl::binary::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::binary(pd));
  step->AddInput(DNNL_ARG_SRC_0, a, av.md);
  step->AddInput(DNNL_ARG_SRC_1, c2, av.md);
  AddFusedOutputStep(b, n, act, std::move(step), av.shape, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Add", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Sub", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Mul", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Div", BuildBinary);

}  // namespace
}  // namespace shoal
