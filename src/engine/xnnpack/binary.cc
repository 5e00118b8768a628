// Add, Sub, Mul, Div on XNNPACK's N-d binary operators, which broadcast
// either operand numpy-style (up to 6 axes). When a 4-D operand arrives in
// NHWC, the operation runs in NHWC: both operands' shapes are given in
// that axis order, and a constant is transposed once at load. A following
// Relu or Clip is the operator's output range (a residual Add + Relu).
#include "engine/xnnpack/xnn_step.h"

namespace shoal {
namespace {

using CreateFn = xnn_status (*)(float, float, uint32_t, xnn_operator_t*);
using SetupFn = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t,
                               const size_t*, const float*, const float*,
                               float*, pthreadpool_t);

struct Operand {
  int value = -1;
  const Tensor* weight = nullptr;
  Shape shape;     // extended to the output's rank
  int input = -1;  // index among the step's inputs
  const float* constant = nullptr;
  std::vector<size_t> dims;  // as XNNPACK sees them
};

// NCHW dims to NHWC order.
std::vector<size_t> NhwcOrder(const Shape& s) {
  return {static_cast<size_t>(s[0]), static_cast<size_t>(s[2]),
          static_cast<size_t>(s[3]), static_cast<size_t>(s[1])};
}

std::vector<float> ToNhwc(const std::vector<float>& d, const Shape& s) {
  std::vector<float> out(d.size());
  const int64_t c = s[1], h = s[2], w = s[3];
  for (int64_t n = 0; n < s[0]; ++n)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x)
          out[((n * h + y) * w + x) * c + k] = d[((n * c + k) * h + y) * w + x];
  return out;
}

StatusOr<bool> BuildBinary(ExecBuilder& b, const Node& n) {
  CreateFn create;
  SetupFn setup;
  if (n.op == "Add") {
    create = xnn_create_add_nd_f32;
    setup = xnn_setup_add_nd_f32;
  } else if (n.op == "Sub") {
    create = xnn_create_subtract_nd_f32;
    setup = xnn_setup_subtract_nd_f32;
  } else if (n.op == "Mul") {
    create = xnn_create_multiply_nd_f32;
    setup = xnn_setup_multiply_nd_f32;
  } else if (n.op == "Div") {
    create = xnn_create_divide_nd_f32;
    setup = xnn_setup_divide_nd_f32;
  } else {
    return false;
  }
  if (n.inputs.size() != 2) return false;
  const Shape& ys = b.graph().FindTensor(n.outputs[0])->shape;
  const size_t rank = ys.size();
  if (rank == 0 || rank > XNN_MAX_TENSOR_DIMS) return false;

  Operand ops[2];
  for (int i = 0; i < 2; ++i) {
    Operand& x = ops[i];
    x.value = ActivationValue(b, n.inputs[i]);
    if (x.value < 0) x.weight = b.Weight(n.inputs[i]);
    if (x.value < 0 && x.weight == nullptr) return false;
    const Shape s = x.value >= 0 ? b.value(x.value).shape : x.weight->shape;
    if (s.size() > rank) return false;
    x.shape.assign(rank - s.size(), 1);
    x.shape.insert(x.shape.end(), s.begin(), s.end());
    for (size_t a = 0; a < rank; ++a)
      if (x.shape[a] != ys[a] && x.shape[a] != 1) return false;
  }
  if (ops[0].value < 0 && ops[1].value < 0) return false;
  // NHWC when an activation operand of 4 axes is in NHWC already.
  bool nhwc = false;
  for (const Operand& x : ops)
    if (rank == 4 && x.value >= 0) {
      const Value& v = b.value(x.value);
      nhwc |= v.shape.size() == 4 && IsNhwc(v.md, v.shape) &&
              !IsPlain(v.md, v.shape);
    }

  bool transpose[2];
  for (int i = 0; i < 2; ++i) {
    // Where the operand's NHWC bytes are its plain ones, plain will do.
    transpose[i] = nhwc && !IsPlain(NhwcDesc(ops[i].shape), ops[i].shape);
    // A lower-rank activation broadcast over NHWC is not taken.
    if (transpose[i] && ops[i].value >= 0 &&
        b.value(ops[i].value).shape.size() != 4)
      return false;
  }
  float lo, hi;
  const Node* act = FusedClamp(b, n.outputs[0], &lo, &hi);
  xnn_operator_t created = nullptr;
  std::shared_ptr<XnnOperator> op = Wrap(create(lo, hi, 0, &created), &created);
  if (!op) return false;

  auto step = std::make_unique<XnnStep>();
  for (int i = 0; i < 2; ++i) {
    Operand& x = ops[i];
    if (x.value >= 0) {
      const Shape vs = b.value(x.value).shape;
      x.input = static_cast<int>(step->reads.size());
      step->AddInput(transpose[i] ? b.InLayout(x.value, NhwcDesc(vs))
                                  : b.Plain(x.value));
    } else {
      x.constant = step->HoldConstant(
          transpose[i] ? ToNhwc(x.weight->data, x.shape) : x.weight->data);
    }
    if (nhwc)
      x.dims = NhwcOrder(x.shape);
    else
      x.dims.assign(x.shape.begin(), x.shape.end());
  }
  const Operand p = ops[0], q = ops[1];
  step->AddCall(op, [setup, p, q](
                        xnn_operator_t o, const std::vector<void*>& in,
                        const std::vector<void*>& out, pthreadpool_t pool) {
    auto data = [&in](const Operand& x) {
      return x.constant ? x.constant : static_cast<const float*>(in[x.input]);
    };
    return setup(o, p.dims.size(), p.dims.data(), q.dims.size(), q.dims.data(),
                 data(p), data(q), static_cast<float*>(out[0]), pool);
  });
  AddXnnOutputStep(b, n, act, std::move(step), ys,
                   nhwc ? NhwcDesc(ys) : PlainDesc(ys));
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Add", BuildBinary);
SHOAL_REGISTER_XNNPACK_KERNEL("Sub", BuildBinary);
SHOAL_REGISTER_XNNPACK_KERNEL("Mul", BuildBinary);
SHOAL_REGISTER_XNNPACK_KERNEL("Div", BuildBinary);

}  // namespace
}  // namespace shoal
