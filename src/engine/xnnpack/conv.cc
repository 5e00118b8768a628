// Conv on XNNPACK: 2-D convolutions of every kind XNNPACK has (grouped,
// depthwise, strided, dilated, asymmetric padding) on NHWC activations,
// with the bias and a following Relu or Clip as the operator's output
// range. The weights, [O, I/g, kH, kW] in ONNX, are given to XNNPACK as
// [g][O/g][kH][kW][I/g], which it packs for its micro-kernels. A quantized
// conv runs on int8 or f32-sums operators (int8_layer.h).
#include "engine/xnnpack/int8_layer.h"
#include "engine/xnnpack/xnn_step.h"
#include "ops/window.h"

namespace shoal {
namespace {

// OIHW to OHWI: per group, XNNPACK's [O/g][kH][kW][I/g].
std::vector<float> OhwiWeights(const Tensor& w) {
  const int64_t o = w.shape[0], i = w.shape[1], kh = w.shape[2],
                kw = w.shape[3];
  std::vector<float> out(w.data.size());
  for (int64_t a = 0; a < o; ++a)
    for (int64_t c = 0; c < i; ++c)
      for (int64_t y = 0; y < kh; ++y)
        for (int64_t x = 0; x < kw; ++x)
          out[((a * kh + y) * kw + x) * i + c] =
              w.data[((a * i + c) * kh + y) * kw + x];
  return out;
}

StatusOr<bool> BuildConv(ExecBuilder& b, const Node& n) {
  // A quantized conv (its weight a DQ of int8 values) first.
  ASSIGN_OR_RETURN(const bool int8, BuildXnnInt8Layer(b, n));
  if (int8) return true;
  const Graph& g = b.graph();
  const std::string& w_name = n.inputs[1];
  const Tensor* w = b.Weight(w_name);
  const int x = ActivationValue(b, n.inputs[0]);
  if (w == nullptr || x < 0 || w->shape.size() != 4) return false;
  const bool has_bias = n.inputs.size() > 2 && !n.inputs[2].empty();
  const Tensor* bias = has_bias ? b.Weight(n.inputs[2]) : nullptr;
  if (has_bias && bias == nullptr) return false;

  const Shape xs = b.value(x).shape;
  const Shape& ys = g.FindTensor(n.outputs[0])->shape;
  if (xs.size() != 4 || ys.size() != 4) return false;
  const Shape& ws = w->shape;
  ASSIGN_OR_RETURN(WindowGeometry geo,
                   ResolveWindow(n, {xs[2], xs[3]}, {ws[2], ws[3]}));
  const int64_t groups = n.attrs.GetInt("group", 1);
  if (groups <= 0 || ws[0] % groups != 0 || xs[1] != ws[1] * groups)
    return false;
  // XNNPACK's output extent is floor((in + pads - span) / stride) + 1,
  // as ONNX's; a shape that disagrees is left to the reference.
  for (int i = 0; i < 2; ++i) {
    const int64_t span = (geo.kernel[i] - 1) * geo.dilation[i] + 1;
    const int64_t out =
        (xs[2 + i] + geo.pad_begin[i] + geo.pad_end[i] - span) / geo.stride[i] +
        1;
    if (out != ys[2 + i]) return false;
  }

  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  const std::vector<float> packed = OhwiWeights(*w);
  char params[256];
  std::snprintf(params, sizeof(params),
                "conv %lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld,%lld,%lld "
                "g%lld %lldx%lld [%g,%g]",
                (long long)geo.kernel[0], (long long)geo.kernel[1],
                (long long)geo.stride[0], (long long)geo.stride[1],
                (long long)geo.dilation[0], (long long)geo.dilation[1],
                (long long)geo.pad_begin[0], (long long)geo.pad_end[1],
                (long long)geo.pad_end[0], (long long)geo.pad_begin[1],
                (long long)groups, (long long)ws[1],
                (long long)(ws[0] / groups), lo, hi);
  const int64_t bytes = static_cast<int64_t>(
      (w->data.size() + (bias ? ws[0] : 0)) * sizeof(float));
  SharedOperator op = PackedOperator(
      b, {w_name, has_bias ? n.inputs[2] : ""}, params, bytes, [&] {
        xnn_operator_t o = nullptr;
        const xnn_status s = xnn_create_convolution2d_nhwc_f32(
            geo.pad_begin[0], geo.pad_end[1], geo.pad_end[0], geo.pad_begin[1],
            geo.kernel[0], geo.kernel[1], geo.stride[0], geo.stride[1],
            geo.dilation[0], geo.dilation[1], groups, ws[1], ws[0] / groups,
            xs[1], ys[1], packed.data(), bias ? bias->data.data() : nullptr, lo,
            hi, /*flags=*/0, &o);
        return Wrap(s, &o);
      });
  if (!op.op) return false;

  auto step = std::make_unique<XnnStep>();
  if (op.shared)
    ++step->shared_weights;
  else
    step->weight_bytes += bytes;
  step->AddInput(b.InLayout(x, NhwcDesc(xs)));
  const size_t batch = xs[0], h = xs[2], wd = xs[3];
  step->AddCall(
      op.op, [batch, h, wd](xnn_operator_t o, const std::vector<void*>& in,
                            const std::vector<void*>& out, pthreadpool_t pool) {
        return xnn_setup_convolution2d_nhwc_f32(
            o, batch, h, wd, static_cast<const float*>(in[0]),
            static_cast<float*>(out[0]), pool);
      });
  AddXnnOutputStep(b, n, act, std::move(step), ys, NhwcDesc(ys));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Conv", BuildConv);

}  // namespace
}  // namespace shoal
