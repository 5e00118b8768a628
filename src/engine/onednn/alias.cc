// Ops that only relabel data: Identity and Dropout (inference) keep the
// producer's value; Reshape and Flatten view the plain bytes with a new
// shape. No step, no copy (beyond a reorder to plain if the input is blocked).
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

StatusOr<bool> BuildIdentity(ExecBuilder& b, const Node& n) {
  b.Define(n.outputs[0], b.ValueOf(n.inputs[0]));
  return true;
}

StatusOr<bool> BuildReshape(ExecBuilder& b, const Node& n) {
  const int x = b.Plain(b.ValueOf(n.inputs[0]));
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  b.Define(n.outputs[0], b.AliasValue(x, n.outputs[0], ys, PlainDesc(ys)));
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Identity", BuildIdentity);
SHOAL_REGISTER_ONEDNN_KERNEL("Dropout", BuildIdentity);
SHOAL_REGISTER_ONEDNN_KERNEL("Reshape", BuildReshape);
SHOAL_REGISTER_ONEDNN_KERNEL("Flatten", BuildReshape);

}  // namespace
}  // namespace shoal
