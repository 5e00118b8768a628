// Resize on oneDNN's resampling primitive where its coordinates are ONNX's:
// linear mode with half_pixel (or pytorch_half_pixel on axes of more than
// one output), resizing only the spatial axes. Nearest uses other rounding
// than oneDNN's, so it stays with the reference kernel.
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildResize(ExecBuilder& b, const Node& n) {
  if (n.attrs.GetString("mode", "nearest") != "linear") return false;
  const std::string ct =
      n.attrs.GetString("coordinate_transformation_mode", "half_pixel");
  if (ct != "half_pixel" && ct != "pytorch_half_pixel") return false;
  const int xid = b.ValueOf(n.inputs[0]);
  if (xid < 0) return false;
  const Shape& xs = b.value(xid).shape;
  const Shape& ys = b.graph().tensors.at(n.outputs[0]).shape;
  if (xs.size() < 3 || xs.size() > 5 || xs[0] != ys[0] || xs[1] != ys[1]) {
    return false;
  }
  for (size_t i = 2; i < ys.size(); ++i) {
    // pytorch_half_pixel maps a single output to 0, half_pixel does not.
    if (ct == "pytorch_half_pixel" && ys[i] == 1 && xs[i] != 1) return false;
  }
  const std::vector<float> scales = n.attrs.GetFloats("scales");
  std::vector<float> factors;
  if (!scales.empty()) factors.assign(scales.begin() + 2, scales.end());
  const int x = b.Plain(xid);
  const Value xv = b.value(x);
  const memory::desc ymd = PlainDesc(ys);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::resampling_forward::desc(dnnl::prop_kind::forward_inference,
                                            dnnl::algorithm::resampling_linear,
                                            factors, xv.md, ymd);
    return dnnl::resampling_forward::primitive_desc(d, ScratchpadAttr(),
                                                    b.engine());
  });
  if (!pd_or.ok()) return false;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(),
                                              dnnl::resampling_forward(*pd_or));
  step->AddInput(DNNL_ARG_SRC, x, xv.md);
  AddFusedOutputStep(b, n, nullptr, std::move(step), ys, ymd);
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Resize", BuildResize);

}  // namespace
}  // namespace shoal
