// Unary activations on oneDNN's eltwise, in the producer's layout (when not
// already fused into the producer as a post-op).
#include <limits>

#include "kernels/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildEltwise(ExecBuilder& b, const Node& n) {
  dnnl::algorithm alg;
  float alpha = 0.f, beta = 0.f;
  if (n.op == "Relu") {
    alg = dnnl::algorithm::eltwise_relu;
  } else if (n.op == "LeakyRelu") {
    alg = dnnl::algorithm::eltwise_relu;
    alpha = n.attrs.GetFloat("alpha", 0.01f);
  } else if (n.op == "Clip") {
    alg = dnnl::algorithm::eltwise_clip_v2;
    alpha = n.attrs.GetFloat("min", std::numeric_limits<float>::lowest());
    beta = n.attrs.GetFloat("max", std::numeric_limits<float>::max());
  } else if (n.op == "Sigmoid") {
    alg = dnnl::algorithm::eltwise_logistic;
  } else if (n.op == "HardSwish") {
    alg = dnnl::algorithm::eltwise_hardswish;
  } else {
    return false;
  }
  const int x = b.ValueOf(n.inputs[0]);
  const Value xv = b.value(x);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                         alg, xv.md, alpha, beta);
    return dnnl::eltwise_forward::primitive_desc(d, ScratchpadAttr(),
                                                 b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::eltwise_forward(pd));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  AddFusedOutputStep(b, n, nullptr, std::move(step), xv.shape, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Relu", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("LeakyRelu", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Clip", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Sigmoid", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("HardSwish", BuildEltwise);

}  // namespace
}  // namespace shoal
