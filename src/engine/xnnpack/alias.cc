// Ops that only relabel data, as on oneDNN: Identity and Dropout keep the
// producer's value; Reshape and Flatten view plain bytes with a new shape
// (an NHWC input is reordered to plain first: the view's element order is
// NCHW's).
#include "engine/xnnpack/xnn_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildIdentity(ExecBuilder& b, const Node& n) {
  const int x = ActivationValue(b, n.inputs[0]);
  if (x < 0) return false;
  b.Define(n.outputs[0], x);
  return true;
}

StatusOr<bool> BuildReshape(ExecBuilder& b, const Node& n) {
  const int v = ActivationValue(b, n.inputs[0]);
  if (v < 0) return false;
  const int x = b.Plain(v);
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  b.Define(n.outputs[0], b.AliasValue(x, n.outputs[0], ys, PlainDesc(ys)));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Identity", BuildIdentity);
SHOAL_REGISTER_XNNPACK_KERNEL("Dropout", BuildIdentity);
SHOAL_REGISTER_XNNPACK_KERNEL("Reshape", BuildReshape);
SHOAL_REGISTER_XNNPACK_KERNEL("Flatten", BuildReshape);

}  // namespace
}  // namespace shoal
