// Unary activations (and Pow by a constant scalar) on oneDNN's eltwise, in the
// producer's layout (when not already fused into the producer as a post-op).
#include <limits>

#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildEltwise(ExecBuilder& b, const Node& n) {
  dnnl::algorithm alg;
  float alpha = 0.f, beta = 0.f;
  dnnl::primitive_attr attr = ScratchpadAttr();
  const Node* swish = nullptr;  // the Mul a Sigmoid's swish pass covers
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
    // x * Sigmoid(x) (SiLU) after a step that could not take it as a
    // post-op: one swish pass instead of two.
    if (const Node* mul = SwishOf(b, n.inputs[0])) {
      alg = dnnl::algorithm::eltwise_swish;
      alpha = 1.f;
      swish = mul;
    }
  } else if (n.op == "HardSwish") {
    alg = dnnl::algorithm::eltwise_hardswish;
  } else if (n.op == "HardSigmoid") {
    // oneDNN 2.6 has no hardsigmoid: alpha x + beta, clipped by a post-op.
    alg = dnnl::algorithm::eltwise_linear;
    alpha = n.attrs.GetFloat("alpha", 0.2f);
    beta = n.attrs.GetFloat("beta", 0.5f);
    dnnl::post_ops po;
    po.append_eltwise(1.f, dnnl::algorithm::eltwise_clip_v2, 0.f, 1.f);
    attr.set_post_ops(po);
  } else if (n.op == "Sqrt") {
    alg = dnnl::algorithm::eltwise_sqrt;
  } else if (n.op == "Abs") {
    alg = dnnl::algorithm::eltwise_abs;
  } else if (n.op == "Exp") {
    alg = dnnl::algorithm::eltwise_exp;
  } else if (n.op == "Tanh") {
    alg = dnnl::algorithm::eltwise_tanh;
  } else if (n.op == "Neg") {
    alg = dnnl::algorithm::eltwise_linear;
    alpha = -1.f;
  } else if (n.op == "Pow") {
    // x^p for a constant scalar exponent p (oneDNN's pow is alpha x^beta).
    const Tensor* p = b.Weight(n.inputs[1]);
    const int x = b.ValueOf(n.inputs[0]);
    if (p == nullptr || p->data.size() != 1 || x < 0) return false;
    if (b.value(x).shape != b.graph().tensors.at(n.outputs[0]).shape) {
      return false;
    }
    alg = dnnl::algorithm::eltwise_pow;
    alpha = 1.f;
    beta = p->data[0];
  } else {
    return false;
  }
  const int x = b.ValueOf(n.inputs[0]);
  const Value xv = b.value(x);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                         alg, xv.md, alpha, beta);
    return dnnl::eltwise_forward::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::eltwise_forward(pd));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  AddFusedOutputStep(b, n, swish, std::move(step), xv.shape, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Relu", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("LeakyRelu", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Clip", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Sigmoid", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("HardSwish", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("HardSigmoid", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Sqrt", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Abs", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Exp", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Tanh", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Neg", BuildEltwise);
SHOAL_REGISTER_ONEDNN_KERNEL("Pow", BuildEltwise);

}  // namespace
}  // namespace shoal
