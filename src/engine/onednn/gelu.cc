#include "engine/onednn/gelu.h"

#include <cmath>

#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

// True if `name` is constant data holding the single value `want` (within
// float rounding of the double torch writes).
bool IsScalar(ExecBuilder& b, const std::string& name, double want) {
  const Tensor* t = b.Weight(name);
  return t != nullptr && t->data.size() == 1 &&
         std::fabs(t->data[0] - want) <= 1e-6 * std::fabs(want);
}

// The operand of binary node `n` other than `tensor`; "" if neither is.
const std::string* OtherOperand(const Node& n, const std::string& tensor) {
  if (n.inputs.size() != 2) return nullptr;
  if (n.inputs[0] == tensor) return &n.inputs[1];
  if (n.inputs[1] == tensor) return &n.inputs[0];
  return nullptr;
}

// The sole reader of `tensor` if it is a binary `op` whose other operand is
// `other` (a tensor name) or, with `other` empty, the constant `scalar`.
const Node* Next(ExecBuilder& b, const std::string& tensor, const char* op,
                 const std::string& other, double scalar) {
  const Node* n = b.SoleConsumer(tensor);
  if (n == nullptr || n->op != op) return nullptr;
  const std::string* o = OtherOperand(*n, tensor);
  if (o == nullptr) return nullptr;
  if (!other.empty()) return *o == other ? n : nullptr;
  return IsScalar(b, *o, scalar) ? n : nullptr;
}

}  // namespace

StatusOr<bool> BuildGeluErf(ExecBuilder& b, const Node& div) {
  if (div.inputs.size() != 2 || !IsScalar(b, div.inputs[1], std::sqrt(2.0)))
    return false;
  const std::string& x = div.inputs[0];
  const int xv = b.ValueOf(x);
  if (xv < 0) return false;
  const Node* erf = b.SoleConsumer(div.outputs[0]);
  if (erf == nullptr || erf->op != "Erf") return false;
  const Node* add = Next(b, erf->outputs[0], "Add", "", 1.0);
  if (add == nullptr) return false;
  const Node* mul = Next(b, add->outputs[0], "Mul", x, 0);
  if (mul == nullptr) return false;
  const Node* half = Next(b, mul->outputs[0], "Mul", "", 0.5);
  if (half == nullptr) return false;

  const Value v = b.value(xv);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                         dnnl::algorithm::eltwise_gelu_erf,
                                         v.md, 0.f, 0.f);
    return dnnl::eltwise_forward::primitive_desc(d, ScratchpadAttr(),
                                                 b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step =
      std::make_unique<PrimitiveStep>(&b.engine(), dnnl::eltwise_forward(pd));
  step->AddInput(DNNL_ARG_SRC, xv, v.md);
  const std::string& out = half->outputs[0];
  const int y = b.NewValue(out, v.shape, pd.dst_desc());
  step->AddOutput(DNNL_ARG_DST, y, pd.dst_desc());
  step->label = div.name + "+Gelu";
  b.AddStep(std::move(step));
  b.Define(out, y);
  for (const Node* n : {erf, add, mul, half}) b.MarkFused(n->name);
  return true;
}

}  // namespace shoal
