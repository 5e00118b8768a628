// MaxPool, AveragePool and GlobalAveragePool on XNNPACK, NHWC. Ceil mode
// is extra padding at the bottom and right: XNNPACK's max pooling reads a
// padded tap as the nearest input pixel of the window, which never changes
// a maximum, and its average pooling divides by the taps inside the input,
// as ONNX's count_include_pad = 0 does.
#include "engine/xnnpack/pool_window.h"
#include "engine/xnnpack/xnn_step.h"
#include "ops/window.h"

namespace shoal {

StatusOr<bool> XnnPoolWindowOf(const Node& n, const Shape& xs, const Shape& ys,
                               XnnPoolWindow* w) {
  if (xs.size() != 4 || ys.size() != 4) return false;
  ASSIGN_OR_RETURN(WindowGeometry geo, ResolveWindow(n, {xs[2], xs[3]}, {}));
  int64_t pad_end[2];
  bool padded = geo.pad_begin[0] || geo.pad_begin[1];
  for (int i = 0; i < 2; ++i) {
    const int64_t span = (geo.kernel[i] - 1) * geo.dilation[i] + 1;
    pad_end[i] = std::max<int64_t>(
        geo.pad_end[i],
        (ys[2 + i] - 1) * geo.stride[i] + span - xs[2 + i] - geo.pad_begin[i]);
    padded |= pad_end[i] != 0;
    if ((xs[2 + i] + geo.pad_begin[i] + pad_end[i] - span) / geo.stride[i] +
            1 !=
        ys[2 + i])
      return false;
    w->kernel[i] = static_cast<uint32_t>(geo.kernel[i]);
    w->stride[i] = static_cast<uint32_t>(geo.stride[i]);
    w->dilation[i] = static_cast<uint32_t>(geo.dilation[i]);
  }
  w->pad_top = static_cast<uint32_t>(geo.pad_begin[0]);
  w->pad_left = static_cast<uint32_t>(geo.pad_begin[1]);
  w->pad_bottom = static_cast<uint32_t>(pad_end[0]);
  w->pad_right = static_cast<uint32_t>(pad_end[1]);
  w->padded = padded;
  return true;
}

namespace {

StatusOr<bool> BuildPool(ExecBuilder& b, const Node& n) {
  const int x = ActivationValue(b, n.inputs[0]);
  if (x < 0) return false;
  // MaxPool's optional second output (indices) is not XNNPACK's.
  if (n.outputs.size() > 1 && !n.outputs[1].empty()) return false;
  const Shape xs = b.value(x).shape;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  if (xs.size() != 4 || ys.size() != 4) return false;
  XnnPoolWindow win;
  ASSIGN_OR_RETURN(bool fits, XnnPoolWindowOf(n, xs, ys, &win));
  if (!fits) return false;
  const bool max = n.op == "MaxPool";
  if (!max && (win.dilation[0] != 1 || win.dilation[1] != 1)) return false;
  const bool padded = win.padded;
  // XNNPACK's average excludes padding; ONNX's may count it.
  if (!max && padded && n.attrs.GetInt("count_include_pad", 0) != 0)
    return false;

  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  const size_t c = xs[1];
  xnn_operator_t o = nullptr;
  xnn_status s;
  if (max) {
    s = xnn_create_max_pooling2d_nhwc_f32(
        win.pad_top, win.pad_right, win.pad_bottom, win.pad_left, win.kernel[0],
        win.kernel[1], win.stride[0], win.stride[1], win.dilation[0],
        win.dilation[1], c, c, c, lo, hi, 0, &o);
  } else {
    s = xnn_create_average_pooling2d_nhwc_f32(
        win.pad_top, win.pad_right, win.pad_bottom, win.pad_left, win.kernel[0],
        win.kernel[1], win.stride[0], win.stride[1], c, c, c, lo, hi, 0, &o);
  }
  std::shared_ptr<XnnOperator> op = Wrap(s, &o);
  if (!op) return false;  // e.g. a 1x1 window, which XNNPACK refuses

  auto step = std::make_unique<XnnStep>();
  step->AddInput(b.InLayout(x, NhwcDesc(xs)));
  const size_t batch = xs[0], h = xs[2], w = xs[3];
  step->AddCall(op, [max, batch, h, w](
                        xnn_operator_t o, const std::vector<void*>& in,
                        const std::vector<void*>& out, pthreadpool_t pool) {
    const float* src = static_cast<const float*>(in[0]);
    float* dst = static_cast<float*>(out[0]);
    return max ? xnn_setup_max_pooling2d_nhwc_f32(o, batch, h, w, src, dst,
                                                  pool)
               : xnn_setup_average_pooling2d_nhwc_f32(o, batch, h, w, src, dst,
                                                      pool);
  });
  AddXnnOutputStep(b, n, act, std::move(step), ys, NhwcDesc(ys));
  return true;
}

StatusOr<bool> BuildGlobalAveragePool(ExecBuilder& b, const Node& n) {
  const int x = ActivationValue(b, n.inputs[0]);
  if (x < 0) return false;
  const Shape xs = b.value(x).shape;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  if (xs.size() != 4) return false;
  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  const size_t c = xs[1];
  xnn_operator_t o = nullptr;
  std::shared_ptr<XnnOperator> op = Wrap(
      xnn_create_global_average_pooling_nwc_f32(c, c, c, lo, hi, 0, &o), &o);
  if (!op) return false;
  auto step = std::make_unique<XnnStep>();
  step->AddInput(b.InLayout(x, NhwcDesc(xs)));
  const size_t batch = xs[0], width = xs[2] * xs[3];
  step->AddCall(
      op, [batch, width](xnn_operator_t o, const std::vector<void*>& in,
                         const std::vector<void*>& out, pthreadpool_t pool) {
        return xnn_setup_global_average_pooling_nwc_f32(
            o, batch, width, static_cast<const float*>(in[0]),
            static_cast<float*>(out[0]), pool);
      });
  // [N, C, 1, 1]: NHWC and plain are the same bytes.
  AddXnnOutputStep(b, n, act, std::move(step), ys, NhwcDesc(ys));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("MaxPool", BuildPool);
SHOAL_REGISTER_XNNPACK_KERNEL("AveragePool", BuildPool);
SHOAL_REGISTER_XNNPACK_KERNEL("GlobalAveragePool", BuildGlobalAveragePool);

}  // namespace
}  // namespace shoal
