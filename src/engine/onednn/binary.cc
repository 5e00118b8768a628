// Add, Sub, Mul, Div on oneDNN's binary primitive. The first operand is an
// activation of the output's shape, in whatever layout its producer chose;
// the second is one of the same shape (a residual add, brought into the
// first's layout), or one that broadcasts over it (an SE gate [1, C, 1, 1],
// a LayerScale [C, 1, 1]), or a constant, plain either way. Add and Mul take
// their operands either way round. Div also recognises GELU's erf form
// (gelu.h), which starts with a Div.
#include "engine/onednn/gelu.h"
#include "engine/onednn/primitive_step.h"

namespace shoal {
namespace {

// An operand: an activation value, or constant data.
struct Operand {
  int value = -1;
  const Tensor* weight = nullptr;
  Shape shape;
};

bool GetOperand(ExecBuilder& b, const std::string& name, Operand* o) {
  o->value = b.ValueOf(name);
  if (o->value >= 0) {
    o->shape = b.value(o->value).shape;
    return true;
  }
  o->weight = b.Weight(name);
  if (o->weight == nullptr) return false;
  o->shape = o->weight->shape;
  return true;
}

// `s` with leading unit axes up to `rank`, if it broadcasts to `to` (each
// axis equal or 1); empty otherwise.
memory::dims BroadcastDims(const Shape& s, const Shape& to) {
  if (s.size() > to.size()) return {};
  memory::dims d(to.size() - s.size(), 1);
  d.insert(d.end(), s.begin(), s.end());
  for (size_t i = 0; i < d.size(); ++i)
    if (d[i] != to[i] && d[i] != 1) return {};
  return d;
}

// Broadcasts oneDNN's binary has fast paths for: a scalar, one value per
// channel (axis 1), or a trailing block of axes (a bias over the last).
// Others (swin's attention mask [1, W, 1, T, T] over [1, W, H, T, T]) run
// its slow reference loop.
bool FastBroadcast(const memory::dims& d, const Shape& to) {
  int differ = 0, first_same = -1;
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != to[i]) ++differ;
    if (d[i] != 1 && first_same < 0) first_same = static_cast<int>(i);
  }
  if (first_same < 0 || differ == 0) return true;  // scalar or full
  bool trailing = true;
  for (size_t i = first_same; i < d.size(); ++i) trailing &= d[i] == to[i];
  if (trailing) return true;
  int non_unit = 0;
  for (size_t i = 0; i < d.size(); ++i) non_unit += d[i] != 1;
  return non_unit == 1 && d.size() > 1 && d[1] != 1;  // per channel
}

// Constant `t` (dims `d`) broadcast to `to`, plain.
std::vector<float> Expand(const Tensor& t, const memory::dims& d,
                          const Shape& to) {
  const int64_t n = NumElements(to);
  std::vector<float> out(n);
  std::vector<int64_t> pos(to.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t i = 0; i < to.size(); ++i)
      src = src * d[i] + (d[i] == 1 ? 0 : pos[i]);
    out[k] = t.data[src];
    for (size_t i = to.size(); i-- > 0;) {
      if (++pos[i] < to[i]) break;
      pos[i] = 0;
    }
  }
  return out;
}

// A constant whose broadcast has no fast path is expanded once at load,
// up to this many elements (16 MiB), and added element by element.
constexpr int64_t kMaxExpandedConstant = int64_t{1} << 22;

StatusOr<bool> BuildBinary(ExecBuilder& b, const Node& n) {
  dnnl::algorithm alg;
  if (n.op == "Add") {
    alg = dnnl::algorithm::binary_add;
  } else if (n.op == "Sub") {
    alg = dnnl::algorithm::binary_sub;
  } else if (n.op == "Mul") {
    alg = dnnl::algorithm::binary_mul;
  } else if (n.op == "Div") {
    ASSIGN_OR_RETURN(bool gelu, BuildGeluErf(b, n));
    if (gelu) return true;
    alg = dnnl::algorithm::binary_div;
  } else {
    return false;
  }
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  if (ys.empty()) return false;
  Operand p, q;
  if (!GetOperand(b, n.inputs[0], &p) || !GetOperand(b, n.inputs[1], &q))
    return false;
  // src0 must be an activation of the output's shape.
  const bool commutes = n.op == "Add" || n.op == "Mul";
  if (p.value < 0 || p.shape != ys) {
    if (!commutes || q.value < 0 || q.shape != ys) return false;
    std::swap(p, q);
  }
  // A copy: InLayout below may add values and move the vector.
  const Value pv = b.value(p.value);
  const bool same = q.value >= 0 && q.shape == ys;
  memory::desc q_md;
  std::vector<float> expanded;  // a constant expanded to the output's shape
  if (same) {
    q_md = pv.md;
  } else {
    const memory::dims d = BroadcastDims(q.shape, ys);
    if (d.empty()) return false;
    q_md = PlainDims(d);
    if (q.weight != nullptr && !FastBroadcast(d, ys) &&
        NumElements(ys) <= kMaxExpandedConstant) {
      expanded = Expand(*q.weight, d, ys);
      q_md = pv.md;
    }
  }
  dnnl::primitive_attr attr = ScratchpadAttr();
  const Node* act = FuseActivation(b, n.outputs[0], &attr);
  auto pd_or = TryDnnl([&] {
    auto d = dnnl::binary::desc(alg, pv.md, q_md, pv.md);
    return dnnl::binary::primitive_desc(d, attr, b.engine());
  });
  if (!pd_or.ok()) return false;
  auto pd = *pd_or;
  auto step = std::make_unique<PrimitiveStep>(&b.engine(), dnnl::binary(pd));
  step->AddInput(DNNL_ARG_SRC_0, p.value, pv.md);
  if (q.value >= 0) {
    step->AddInput(DNNL_ARG_SRC_1,
                   same ? b.InLayout(q.value, pv.md) : b.Plain(q.value), q_md);
  } else if (!expanded.empty()) {
    step->AddFixed(DNNL_ARG_SRC_1, ReorderedWeights(b.engine(), expanded.data(),
                                                    PlainDesc(ys), q_md));
  } else {
    step->AddFixed(
        DNNL_ARG_SRC_1,
        ReorderedWeights(b.engine(), q.weight->data.data(), q_md, q_md));
  }
  AddFusedOutputStep(b, n, act, std::move(step), ys, pd.dst_desc());
  return true;
}

SHOAL_REGISTER_ONEDNN_KERNEL("Add", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Sub", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Mul", BuildBinary);
SHOAL_REGISTER_ONEDNN_KERNEL("Div", BuildBinary);

}  // namespace
}  // namespace shoal
