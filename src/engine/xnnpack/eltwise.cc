// Element-wise activations on XNNPACK, in whatever dense layout the input
// is in (NHWC or plain): Relu and Clip as a clamp, LeakyRelu, Sigmoid,
// HardSwish, Abs, Neg, Sqrt. This XNNPACK (2022) has
// no f32 Tanh, Erf or GELU: those run on the reference kernels.
#include "engine/xnnpack/xnn_step.h"

namespace shoal {
namespace {

using CreateFn = std::function<xnn_status(size_t channels, xnn_operator_t*)>;
using SetupFn = xnn_status (*)(xnn_operator_t, size_t, const float*, float*,
                               pthreadpool_t);

struct Unary {
  CreateFn create;
  SetupFn setup;
};

bool UnaryOf(const Node& n, Unary* u) {
  auto simple = [](auto create) {
    return
        [create](size_t c, xnn_operator_t* o) { return create(c, c, c, 0, o); };
  };
  if (n.op == "Relu" || n.op == "Clip") {
    float lo = 0.f, hi = kNoMax;
    if (n.op == "Clip") {
      if (n.inputs.size() != 1) return false;
      lo = n.attrs.GetFloat("min", kNoMin);
      hi = n.attrs.GetFloat("max", kNoMax);
      if (!(lo < hi)) return false;
    }
    u->create = [lo, hi](size_t c, xnn_operator_t* o) {
      return xnn_create_clamp_nc_f32(c, c, c, lo, hi, 0, o);
    };
    u->setup = xnn_setup_clamp_nc_f32;
  } else if (n.op == "LeakyRelu") {
    const float alpha = n.attrs.GetFloat("alpha", 0.01f);
    u->create = [alpha](size_t c, xnn_operator_t* o) {
      return xnn_create_leaky_relu_nc_f32(c, c, c, alpha, 0, o);
    };
    u->setup = xnn_setup_leaky_relu_nc_f32;
  } else if (n.op == "Sigmoid") {
    u->create = simple(xnn_create_sigmoid_nc_f32);
    u->setup = xnn_setup_sigmoid_nc_f32;
  } else if (n.op == "HardSwish") {
    // ONNX's x · clip(x/6 + 1/2, 0, 1) is XNNPACK's x · relu6(x + 3) / 6.
    u->create = simple(xnn_create_hardswish_nc_f32);
    u->setup = xnn_setup_hardswish_nc_f32;
  } else if (n.op == "Abs") {
    u->create = simple(xnn_create_abs_nc_f32);
    u->setup = xnn_setup_abs_nc_f32;
  } else if (n.op == "Neg") {
    u->create = simple(xnn_create_negate_nc_f32);
    u->setup = xnn_setup_negate_nc_f32;
  } else if (n.op == "Sqrt") {
    u->create = simple(xnn_create_square_root_nc_f32);
    u->setup = xnn_setup_square_root_nc_f32;
  } else {
    return false;
  }
  return true;
}

StatusOr<bool> BuildUnary(ExecBuilder& b, const Node& n) {
  Unary u;
  if (!UnaryOf(n, &u)) return false;
  int x = ActivationValue(b, n.inputs[0]);
  if (x < 0) return false;
  Value xv = b.value(x);
  // Dense layouts only: a oneDNN-blocked value (never made by this
  // backend's steps, but a caller's graph input is plain) goes plain.
  if (!IsNhwc(xv.md, xv.shape) && !IsPlain(xv.md, xv.shape)) {
    x = b.Plain(x);
    xv = b.value(x);
  }
  const int64_t count = NumElements(xv.shape);
  if (count == 0) return false;
  xnn_operator_t o = nullptr;
  // One row of all elements: XNNPACK splits a contiguous row into blocks
  // for its threads.
  std::shared_ptr<XnnOperator> op = Wrap(u.create(count, &o), &o);
  if (!op) return false;
  auto step = std::make_unique<XnnStep>();
  step->AddInput(x);
  const SetupFn setup = u.setup;
  step->AddCall(op, [setup](xnn_operator_t o, const std::vector<void*>& in,
                            const std::vector<void*>& out, pthreadpool_t pool) {
    return setup(o, 1, static_cast<const float*>(in[0]),
                 static_cast<float*>(out[0]), pool);
  });
  AddXnnOutputStep(b, n, nullptr, std::move(step), xv.shape, xv.md);
  return true;
}

SHOAL_REGISTER_XNNPACK_KERNEL("Relu", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("Clip", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("LeakyRelu", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("Sigmoid", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("HardSwish", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("Abs", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("Neg", BuildUnary);
SHOAL_REGISTER_XNNPACK_KERNEL("Sqrt", BuildUnary);

}  // namespace
}  // namespace shoal
