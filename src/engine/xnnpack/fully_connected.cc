// Gemm by a constant weight (a fully connected layer) on XNNPACK's
// fully_connected operator: B as [N, K] (transB) or [K, N] (XNNPACK's
// transposed-weights flag), the bias a vector of N, a following Relu or
// Clip as the output range; and MatMul by a constant [K, N]. Quantized ones
// run as int8 layers (int8_layer.h).
#include "engine/xnnpack/int8_layer.h"
#include "engine/xnnpack/xnn_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildFullyConnected(ExecBuilder& b, const Node& n) {
  // A quantized layer (its weight a DQ of int8 values) first.
  ASSIGN_OR_RETURN(const bool int8, BuildXnnInt8Layer(b, n));
  if (int8) return true;
  const Graph& g = b.graph();
  if (n.attrs.GetInt("transA", 0) != 0 ||
      n.attrs.GetFloat("alpha", 1.f) != 1.f ||
      n.attrs.GetFloat("beta", 1.f) != 1.f) {
    return false;
  }
  const std::string& w_name = n.inputs[1];
  const Tensor* w = b.Weight(w_name);
  const int x = ActivationValue(b, n.inputs[0]);
  if (w == nullptr || x < 0 || w->shape.size() != 2) return false;
  const Shape xs = b.value(x).shape;
  const Shape& ys = g.FindTensor(n.outputs[0])->shape;
  if (xs.size() != 2 || ys.size() != 2) return false;
  const bool trans_b = n.attrs.GetInt("transB", 0) != 0;
  const int64_t k = xs[1], out_features = ys[1];
  if (w->shape[trans_b ? 1 : 0] != k ||
      w->shape[trans_b ? 0 : 1] != out_features)
    return false;
  const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  const Tensor* bias = has_bias ? b.Weight(n.inputs[2]) : nullptr;
  if (has_bias && (bias == nullptr ||
                   static_cast<int64_t>(bias->data.size()) != out_features))
    return false;

  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  char params[128];
  std::snprintf(params, sizeof(params), "fc %lldx%lld t%d [%g,%g]",
                (long long)k, (long long)out_features, trans_b ? 1 : 0, lo, hi);
  const int64_t bytes = static_cast<int64_t>(
      (w->data.size() + (bias ? bias->data.size() : 0)) * sizeof(float));
  SharedOperator op = PackedOperator(
      b, {w_name, has_bias ? n.inputs[2] : ""}, params, bytes, [&] {
        xnn_operator_t o = nullptr;
        const xnn_status s = xnn_create_fully_connected_nc_f32(
            k, out_features, k, out_features, w->data.data(),
            bias ? bias->data.data() : nullptr, lo, hi,
            trans_b ? 0 : XNN_FLAG_TRANSPOSE_WEIGHTS, &o);
        return Wrap(s, &o);
      });
  if (!op.op) return false;

  auto step = std::make_unique<XnnStep>();
  if (op.shared)
    ++step->shared_weights;
  else
    step->weight_bytes += bytes;
  step->AddInput(b.Plain(x));
  const size_t m = xs[0];
  step->AddCall(op.op, [m](xnn_operator_t o, const std::vector<void*>& in,
                           const std::vector<void*>& out, pthreadpool_t pool) {
    return xnn_setup_fully_connected_nc_f32(o, m,
                                            static_cast<const float*>(in[0]),
                                            static_cast<float*>(out[0]), pool);
  });
  AddXnnOutputStep(b, n, act, std::move(step), ys, PlainDesc(ys));
  return true;
}

// MatMul of an activation [..., K] by a constant [K, N]: a fully connected
// layer over every row of the activation (a transformer's projections).
StatusOr<bool> BuildMatMul(ExecBuilder& b, const Node& n) {
  ASSIGN_OR_RETURN(const bool int8, BuildXnnInt8Layer(b, n));
  if (int8) return true;
  if (n.inputs.size() != 2) return false;
  const std::string& w_name = n.inputs[1];
  const Tensor* w = b.Weight(w_name);
  const int x = ActivationValue(b, n.inputs[0]);
  if (w == nullptr || x < 0 || w->shape.size() != 2) return false;
  const Shape xs = b.value(x).shape;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  if (xs.size() < 2 || ys.size() != xs.size()) return false;
  const int64_t k = w->shape[0], out_features = w->shape[1];
  if (xs.back() != k || ys.back() != out_features || k == 0) return false;

  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  char params[128];
  std::snprintf(params, sizeof(params), "fc %lldx%lld t0 [%g,%g]", (long long)k,
                (long long)out_features, lo, hi);
  const int64_t bytes = static_cast<int64_t>(w->data.size() * sizeof(float));
  SharedOperator op = PackedOperator(b, {w_name}, params, bytes, [&] {
    xnn_operator_t o = nullptr;
    const xnn_status s = xnn_create_fully_connected_nc_f32(
        k, out_features, k, out_features, w->data.data(), nullptr, lo, hi,
        XNN_FLAG_TRANSPOSE_WEIGHTS, &o);
    return Wrap(s, &o);
  });
  if (!op.op) return false;

  auto step = std::make_unique<XnnStep>();
  if (op.shared)
    ++step->shared_weights;
  else
    step->weight_bytes += bytes;
  step->AddInput(b.Plain(x));
  const size_t rows = static_cast<size_t>(NumElements(xs) / k);
  step->AddCall(op.op, [rows](xnn_operator_t o, const std::vector<void*>& in,
                              const std::vector<void*>& out,
                              pthreadpool_t pool) {
    return xnn_setup_fully_connected_nc_f32(o, rows,
                                            static_cast<const float*>(in[0]),
                                            static_cast<float*>(out[0]), pool);
  });
  AddXnnOutputStep(b, n, act, std::move(step), ys, PlainDesc(ys));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Gemm", BuildFullyConnected);
SHOAL_REGISTER_XNNPACK_KERNEL("MatMul", BuildMatMul);

}  // namespace
}  // namespace shoal
