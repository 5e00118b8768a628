// A quantized layer on XNNPACK's int8 convolution (qc8: int8 data, int8
// weights with a scale per output channel, int32 bias), where its f32
// output only goes to the next QuantizeLinear, through at most a Relu or
// Clip, a MaxPool and a Reshape or Flatten:
//   layer -> [Relu | Clip] -> [MaxPool] -> [Reshape | Flatten] -> Q
// Q is monotonic, so Q(clip(y)) = clamp(Q(y), Q(lo), Q(hi)) and
// Q(max(...)) = max(Q(...)): the operator requantizes its sums to Q's scale
// and zero point with the activation as its output range, the MaxPool runs
// on the int8 values, and the Q's output is theirs. The bias becomes
// round(bias / (s_x * s_w[c])) in the sums' units. Against the reference's
// Q(f32 layer output) an element moves by one step at most, where
// requantization or the bias's rounding crosses a rounding boundary.
#include <cmath>
#include <cstdio>

#include "engine/xnnpack/int8_layer.h"
#include "engine/xnnpack/pool_window.h"

namespace shoal {
namespace {

// The nodes between the layer and the Q its operator computes.
struct Qc8Chain {
  const Node* act = nullptr;
  float lo = kNoMin, hi = kNoMax;
  const Node* pool = nullptr;
  XnnPoolWindow window;
  Shape pool_shape;
  const Node* reshape = nullptr;
  const Node* quantize = nullptr;
  QuantParams out;
};

std::optional<Qc8Chain> FindChain(ExecBuilder& b, const XnnInt8Layer& l) {
  const Graph& g = b.graph();
  Qc8Chain c;
  std::string t = l.node->outputs[0];
  c.act = FusedClamp(b, t, &c.lo, &c.hi);
  if (c.act) t = c.act->outputs[0];
  const Node* next = b.SoleConsumer(t);
  if (next && next->op == "MaxPool" && l.conv && next->inputs[0] == t &&
      (next->outputs.size() == 1 || next->outputs[1].empty())) {
    const TensorInfo* ps = g.FindTensor(next->outputs[0]);
    if (!ps) return std::nullopt;
    auto fits = XnnPoolWindowOf(*next, l.out_shape, ps->shape, &c.window);
    if (!fits.ok() || !*fits) return std::nullopt;
    c.pool = next;
    c.pool_shape = ps->shape;
    t = next->outputs[0];
    next = b.SoleConsumer(t);
  }
  if (next && (next->op == "Reshape" || next->op == "Flatten") &&
      next->inputs[0] == t) {
    c.reshape = next;
    t = next->outputs[0];
    next = b.SoleConsumer(t);
  }
  if (!next || next->op != "QuantizeLinear" || next->inputs[0] != t)
    return std::nullopt;
  const TensorInfo* qt = g.FindTensor(t);
  if (!qt) return std::nullopt;
  auto p = ReadQuantParams(*next, qt->shape);
  if (!p.ok() || !p->per_tensor()) return std::nullopt;
  c.quantize = next;
  c.out = *p;
  return c;
}

// XNNPACK's setup of a qc8 convolution over `l`'s input.
XnnSetupFn Qc8Setup(const XnnInt8Layer& l) {
  return [batch = l.batch, h = l.in_h, w = l.in_w](
             xnn_operator_t o, const std::vector<void*>& in,
             const std::vector<void*>& out, pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_qc8(o, batch, h, w,
                                            static_cast<const int8_t*>(in[0]),
                                            static_cast<int8_t*>(out[0]), pool);
  };
}

}  // namespace

StatusOr<bool> BuildQc8Layer(ExecBuilder& b, const XnnInt8Layer& l) {
  auto chain = FindChain(b, l);
  if (!chain) return false;
  const float s_out = chain->out.scale[0];
  const int32_t z_out = chain->out.zero_point[0];
  const int q_lo =
      chain->lo == kNoMin
          ? kInt8Min
          : static_cast<int>(QuantizeValue(chain->lo, s_out, z_out));
  const int q_hi =
      chain->hi == kNoMax
          ? kInt8Max
          : static_cast<int>(QuantizeValue(chain->hi, s_out, z_out));
  if (q_lo >= q_hi) return false;  // XNNPACK wants a non-empty range

  const size_t channels = l.out_channels();
  std::vector<float> kernel_scale(channels);
  std::vector<int32_t> bias(channels, 0);
  for (size_t c = 0; c < channels; ++c) {
    kernel_scale[c] = l.w.scale[l.w.per_tensor() ? 0 : c];
    if (l.bias.empty()) continue;
    const double q = std::nearbyint(static_cast<double>(l.bias[c]) /
                                    static_cast<double>(l.OutputScale(c)));
    if (!(std::fabs(q) < 2147483647.0)) return false;
    bias[c] = static_cast<int32_t>(q);
  }
  char params[128];
  std::snprintf(params, sizeof(params), " out%a,%d [%d,%d]",
                static_cast<double>(s_out), z_out, q_lo, q_hi);
  const int64_t bytes = static_cast<int64_t>(
      l.weights.size() + channels * (sizeof(int32_t) + sizeof(float)));
  SharedOperator op = PackedOperator(
      b, {l.weight_name, l.bias_name}, "qc8 " + l.GeometryKey() + params, bytes,
      [&] {
        xnn_operator_t o = nullptr;
        const xnn_status s = xnn_create_convolution2d_nhwc_qc8(
            l.pad_top, l.pad_right, l.pad_bottom, l.pad_left, l.kernel[0],
            l.kernel[1], l.stride[0], l.stride[1], l.dilation[0], l.dilation[1],
            l.groups, l.group_in, l.group_out, l.groups * l.group_in, channels,
            static_cast<int8_t>(l.x.zero_point[0]), l.x.scale[0],
            kernel_scale.data(), l.weights.data(), bias.data(),
            static_cast<int8_t>(z_out), s_out, static_cast<int8_t>(q_lo),
            static_cast<int8_t>(q_hi), /*flags=*/0, &o);
        return Wrap(s, &o);
      });
  // XNNPACK refuses a requantization scale out of its range: f32 sums
  // take the layer then.
  if (!op.op) return false;
  std::shared_ptr<XnnOperator> pool_op;
  if (chain->pool) {
    const XnnPoolWindow& w = chain->window;
    xnn_operator_t o = nullptr;
    pool_op = Wrap(
        xnn_create_max_pooling2d_nhwc_s8(
            w.pad_top, w.pad_right, w.pad_bottom, w.pad_left, w.kernel[0],
            w.kernel[1], w.stride[0], w.stride[1], w.dilation[0], w.dilation[1],
            channels, channels, channels, kInt8Min, kInt8Max, /*flags=*/0, &o),
        &o);
    if (!pool_op) return false;
  }

  const Node& n = *l.node;
  auto step = std::make_unique<XnnStep>();
  if (op.shared)
    ++step->shared_weights;
  else
    step->weight_bytes += bytes;
  step->impl = "qc8";
  step->int8_layer = true;
  step->AddInput(Int8SourceValue(b, l));
  step->AddCall(op.op, Qc8Setup(l));
  AddXnnOutputStep(b, n, chain->act, std::move(step), l.out_shape,
                   S8Desc(l.out_shape, l.conv));
  int y = b.ValueOf(n.outputs[0]);
  if (chain->pool) {
    const Node& p = *chain->pool;
    auto ps = std::make_unique<XnnStep>();
    ps->impl = "s8";
    ps->AddInput(y);
    ps->AddCall(pool_op,
                [batch = l.batch, h = l.out_shape[2], w = l.out_shape[3]](
                    xnn_operator_t o, const std::vector<void*>& in,
                    const std::vector<void*>& out, pthreadpool_t pool) {
                  return xnn_setup_max_pooling2d_nhwc_s8(
                      o, batch, h, w, static_cast<const int8_t*>(in[0]),
                      static_cast<int8_t*>(out[0]), pool);
                });
    y = b.NewValue(p.outputs[0], chain->pool_shape,
                   S8Desc(chain->pool_shape, true));
    ps->AddOutput(y);
    ps->label = p.name;
    b.AddStep(std::move(ps));
    b.Define(p.outputs[0], y);
    b.MarkFused(p.name);
  }
  if (chain->reshape) {
    const Node& r = *chain->reshape;
    const Shape& rs = b.graph().FindTensor(r.outputs[0])->shape;
    const int plain = b.InLayout(y, S8Desc(b.value(y).shape, false));
    y = b.AliasValue(plain, r.outputs[0], rs, S8Desc(rs, false));
    b.Define(r.outputs[0], y);
    b.MarkFused(r.name);
  }
  b.Define(chain->quantize->outputs[0], y);
  b.MarkFused(chain->quantize->name);
  return true;
}

}  // namespace shoal
