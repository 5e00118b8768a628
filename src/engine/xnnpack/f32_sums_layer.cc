// A quantized layer on XNNPACK's f32 convolution over its integer values,
// where its output is not only requantized (an Add reads it, it is the
// graph's output): x_q - z_x and w_q as f32, the sums scaled by
// s_x * s_w[c] per output channel, then the bias and the layer's Relu or
// Clip. Every product of two int8 values is exact in f32 and the sums
// round as an f32 layer's do, so it agrees with the reference's integer
// kernel as oneDNN's f32-sums path does (engine/int8_path.h). The weights
// are held as f32: 4x their int8 bytes.
#include <cstdio>

#include "engine/xnnpack/int8_layer.h"

namespace shoal {
namespace {

// x_q - z_x as f32 in the layer's layout: XNNPACK's conversion of the s8
// data with scale 1, exact; one per source and zero point, which every
// f32-sums layer reading that source shares.
int CentredValue(ExecBuilder& b, const XnnInt8Layer& l) {
  const int32_t z = l.x.zero_point[0];
  const std::string key = l.source + "#centred " + std::to_string(z) +
                          (l.conv ? " nhwc" : " plain");
  int v = b.ValueOf(key);
  if (v >= 0) return v;
  const Shape& shape = l.in_shape;
  const size_t channels = l.conv ? shape[1] : shape.back();
  const size_t rows = static_cast<size_t>(NumElements(shape)) / channels;
  xnn_operator_t o = nullptr;
  std::shared_ptr<XnnOperator> op =
      Wrap(xnn_create_convert_nc_qs8_f32(channels, channels, channels, 1.f,
                                         static_cast<int8_t>(z), 0, &o),
           &o);
  if (!op) return -1;
  auto step = std::make_unique<XnnStep>();
  step->AddInput(Int8SourceValue(b, l));
  step->AddCall(op, [rows](xnn_operator_t o, const std::vector<void*>& in,
                           const std::vector<void*>& out, pthreadpool_t pool) {
    return xnn_setup_convert_nc_qs8_f32(o, rows,
                                        static_cast<const int8_t*>(in[0]),
                                        static_cast<float*>(out[0]), pool);
  });
  v = b.NewValue(l.source, shape, l.conv ? NhwcDesc(shape) : PlainDesc(shape));
  step->AddOutput(v);
  // A conversion of the input, as a reorder is: no node's step.
  step->label = "reorder " + l.source;
  b.AddStep(std::move(step));
  b.Define(key, v);
  return v;
}

}  // namespace

StatusOr<bool> BuildF32SumsLayer(ExecBuilder& b, const XnnInt8Layer& l) {
  const Node& n = *l.node;
  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  const size_t channels = l.out_channels();
  const std::vector<float> weights(l.weights.begin(), l.weights.end());
  const int64_t bytes = static_cast<int64_t>(weights.size() * sizeof(float));
  SharedOperator conv = PackedOperator(
      b, {l.weight_name}, "f32-sums " + l.GeometryKey(), bytes, [&] {
        xnn_operator_t o = nullptr;
        const xnn_status s = xnn_create_convolution2d_nhwc_f32(
            l.pad_top, l.pad_right, l.pad_bottom, l.pad_left, l.kernel[0],
            l.kernel[1], l.stride[0], l.stride[1], l.dilation[0], l.dilation[1],
            l.groups, l.group_in, l.group_out, l.groups * l.group_in, channels,
            weights.data(), nullptr, kNoMin, kNoMax, /*flags=*/0, &o);
        return Wrap(s, &o);
      });
  if (!conv.op) return false;
  // The scales, then the bias with the activation as its output range
  // (the scales' when there is no bias).
  const bool has_bias = !l.bias.empty();
  xnn_operator_t mo = nullptr, ao = nullptr;
  std::shared_ptr<XnnOperator> mul =
      Wrap(xnn_create_multiply_nd_f32(has_bias ? kNoMin : lo,
                                      has_bias ? kNoMax : hi, 0, &mo),
           &mo);
  std::shared_ptr<XnnOperator> add;
  if (has_bias) add = Wrap(xnn_create_add_nd_f32(lo, hi, 0, &ao), &ao);
  if (!mul || (has_bias && !add)) return false;
  const int x = CentredValue(b, l);
  if (x < 0) return false;

  auto step = std::make_unique<XnnStep>();
  if (conv.shared)
    ++step->shared_weights;
  else
    step->weight_bytes += bytes;
  step->impl = "f32-sums";
  step->int8_layer = true;
  step->AddInput(x);
  step->AddCall(conv.op, [batch = l.batch, h = l.in_h, w = l.in_w](
                             xnn_operator_t o, const std::vector<void*>& in,
                             const std::vector<void*>& out,
                             pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_f32(o, batch, h, w,
                                            static_cast<const float*>(in[0]),
                                            static_cast<float*>(out[0]), pool);
  });
  std::vector<float> scales(channels);
  for (size_t c = 0; c < channels; ++c) scales[c] = l.OutputScale(c);
  // The output's channels are its innermost axis (NHWC, or rows of a
  // fully connected layer): the per-channel operands broadcast over rows.
  const size_t rows = static_cast<size_t>(NumElements(l.out_shape)) / channels;
  // Elementwise in place: each element is read before it is written.
  auto per_channel = [rows, channels](bool multiply, const float* operand) {
    return [=](xnn_operator_t o, const std::vector<void*>&,
               const std::vector<void*>& out, pthreadpool_t pool) {
      const size_t a[2] = {rows, channels}, c[1] = {channels};
      float* y = static_cast<float*>(out[0]);
      return multiply
                 ? xnn_setup_multiply_nd_f32(o, 2, a, 1, c, y, operand, y, pool)
                 : xnn_setup_add_nd_f32(o, 2, a, 1, c, y, operand, y, pool);
    };
  };
  step->AddCall(mul, per_channel(true, step->HoldConstant(std::move(scales))));
  if (has_bias)
    step->AddCall(add, per_channel(false, step->HoldConstant(l.bias)));
  AddXnnOutputStep(b, n, act, std::move(step), l.out_shape,
                   l.conv ? NhwcDesc(l.out_shape) : PlainDesc(l.out_shape));
  return true;
}

}  // namespace shoal
