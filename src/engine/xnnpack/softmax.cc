// Softmax on XNNPACK along the last axis of a plain tensor (XNNPACK's
// softmax normalises each row of an N x C matrix); another axis runs on
// the reference kernel.
#include "engine/xnnpack/xnn_step.h"
#include "ops/axis.h"

namespace shoal {
namespace {

StatusOr<bool> BuildSoftmax(ExecBuilder& b, const Node& n) {
  int x = ActivationValue(b, n.inputs[0]);
  if (x < 0) return false;
  const Shape xs = b.value(x).shape;
  if (xs.empty()) return false;
  const int64_t rank = static_cast<int64_t>(xs.size());
  if (NormalizeAxis(n.attrs.GetInt("axis", -1), rank) != rank - 1) return false;
  const size_t channels = xs.back();
  if (channels == 0) return false;
  xnn_operator_t o = nullptr;
  std::shared_ptr<XnnOperator> op =
      Wrap(xnn_create_softmax_nc_f32(channels, channels, channels, 0, &o), &o);
  if (!op) return false;
  auto step = std::make_unique<XnnStep>();
  step->AddInput(b.Plain(x));
  const size_t rows = NumElements(xs) / channels;
  step->AddCall(op, [rows](xnn_operator_t o, const std::vector<void*>& in,
                           const std::vector<void*>& out, pthreadpool_t pool) {
    return xnn_setup_softmax_nc_f32(o, rows, static_cast<const float*>(in[0]),
                                    static_cast<float*>(out[0]), pool);
  });
  AddXnnOutputStep(b, n, nullptr, std::move(step), xs, PlainDesc(xs));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Softmax", BuildSoftmax);

}  // namespace
}  // namespace shoal
