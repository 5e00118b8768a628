// Softmax on oneDNN along any axis, in plain layout.
#include "engine/onednn/primitive_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

StatusOr<bool> BuildSoftmax(ExecBuilder& b, const Node& n) {
  const int x = b.Plain(b.ValueOf(n.inputs[0]));
  const Value xv = b.value(x);
  const int axis = static_cast<int>(NormalizeAxis(
      n.attrs.GetInt("axis", -1), static_cast<int64_t>(xv.shape.size())));
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference,
                                         xv.md, axis);
    return dnnl::softmax_forward::primitive_desc(d, ScratchpadAttr(),
                                                 b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::softmax_forward(pd));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  AddFusedOutputStep(b, n, nullptr, std::move(step), xv.shape, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Softmax", BuildSoftmax);

}  // namespace
}  // namespace shoal
