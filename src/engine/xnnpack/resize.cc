// Resize (linear, of H and W) on XNNPACK's bilinear resize in NHWC. Its
// coordinates are ONNX's half_pixel (and pytorch_half_pixel on axes of
// more than one output), align_corners (its flag of that name) and
// asymmetric (TensorFlow's legacy mode), with the scale in / out: a
// `scales` attribute other than out / in is the reference kernel's.
#include "engine/xnnpack/xnn_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildResize(ExecBuilder& b, const Node& n) {
  if (n.attrs.GetString("mode", "nearest") != "linear") return false;
  const std::string ct =
      n.attrs.GetString("coordinate_transformation_mode", "half_pixel");
  uint32_t flags = 0;
  if (ct == "align_corners")
    flags = XNN_FLAG_ALIGN_CORNERS;
  else if (ct == "asymmetric")
    flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  else if (ct != "half_pixel" && ct != "pytorch_half_pixel")
    return false;
  const int x = ActivationValue(b, n.inputs[0]);
  if (x < 0) return false;
  const Shape xs = b.value(x).shape;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  if (xs.size() != 4 || ys.size() != 4 || xs[0] != ys[0] || xs[1] != ys[1])
    return false;
  const std::vector<float> scales = n.attrs.GetFloats("scales");
  for (int a = 2; a < 4; ++a) {
    // pytorch_half_pixel maps a single output to 0, half_pixel does not.
    if (ct == "pytorch_half_pixel" && ys[a] == 1 && xs[a] != 1) return false;
    if (!scales.empty() &&
        static_cast<double>(scales[a]) !=
            static_cast<double>(ys[a]) / static_cast<double>(xs[a]))
      return false;
  }
  const size_t c = xs[1];
  xnn_operator_t o = nullptr;
  std::shared_ptr<XnnOperator> op =
      Wrap(xnn_create_resize_bilinear2d_nhwc_f32(c, c, c, flags, &o), &o);
  if (!op) return false;
  auto step = std::make_unique<XnnStep>();
  step->AddInput(b.InLayout(x, NhwcDesc(xs)));
  const size_t batch = xs[0], ih = xs[2], iw = xs[3], oh = ys[2], ow = ys[3];
  step->AddCall(op, [=](xnn_operator_t o, const std::vector<void*>& in,
                        const std::vector<void*>& out, pthreadpool_t pool) {
    return xnn_setup_resize_bilinear2d_nhwc_f32(
        o, batch, ih, iw, oh, ow, static_cast<const float*>(in[0]),
        static_cast<float*>(out[0]), pool);
  });
  AddXnnOutputStep(b, n, nullptr, std::move(step), ys, NhwcDesc(ys));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Resize", BuildResize);

}  // namespace
}  // namespace shoal
