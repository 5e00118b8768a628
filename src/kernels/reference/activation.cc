// Elementwise activations, Identity, Dropout and Softmax.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// Applies f to every element of the single input.
template <typename F>
Status Map(const Node& node, const std::vector<ConstView>& in,
           const std::vector<MutView>& out, F f) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const float* x = in[0].data;
  float* y = out[0].data;
  for (int64_t i = 0; i < in[0].size(); ++i) y[i] = f(x[i]);
  return Status::Ok();
}

Status ReluKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) { return v > 0.f ? v : 0.f; });
}

Status LeakyReluKernel(const Node& node, const std::vector<ConstView>& in,
                       const std::vector<MutView>& out) {
  const float alpha = node.attrs.GetFloat("alpha", 0.01f);
  return Map(node, in, out, [=](float v) { return v >= 0.f ? v : alpha * v; });
}

// An absent bound is no bound.
Status ClipKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  const float inf = std::numeric_limits<float>::infinity();
  const float lo = node.attrs.GetFloat("min", -inf);
  const float hi = node.attrs.GetFloat("max", inf);
  return Map(node, in, out,
             [=](float v) { return std::min(std::max(v, lo), hi); });
}

Status SigmoidKernel(const Node& node, const std::vector<ConstView>& in,
                     const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) {
    return static_cast<float>(1.0 / (1.0 + std::exp(-static_cast<double>(v))));
  });
}

// ONNX HardSwish: x * max(0, min(1, x / 6 + 0.5)).
Status HardSwishKernel(const Node& node, const std::vector<ConstView>& in,
                       const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) {
    const double gate = std::clamp(v / 6.0 + 0.5, 0.0, 1.0);
    return static_cast<float>(v * gate);
  });
}

// ONNX HardSigmoid: max(0, min(1, alpha * x + beta)).
Status HardSigmoidKernel(const Node& node, const std::vector<ConstView>& in,
                         const std::vector<MutView>& out) {
  const double alpha = node.attrs.GetFloat("alpha", 0.2f);
  const double beta = node.attrs.GetFloat("beta", 0.5f);
  return Map(node, in, out, [=](float v) {
    return static_cast<float>(std::clamp(alpha * v + beta, 0.0, 1.0));
  });
}

Status ErfKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) {
    return static_cast<float>(std::erf(static_cast<double>(v)));
  });
}

Status AbsKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) { return std::fabs(v); });
}

Status NegKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) { return -v; });
}

Status ExpKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) {
    return static_cast<float>(std::exp(static_cast<double>(v)));
  });
}

Status TanhKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) {
    return static_cast<float>(std::tanh(static_cast<double>(v)));
  });
}

Status SqrtKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) {
    return static_cast<float>(std::sqrt(static_cast<double>(v)));
  });
}

// Identity; also Dropout, which is the identity at inference.
Status CopyKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  return Map(node, in, out, [](float v) { return v; });
}

SHOAL_REGISTER_REF_KERNEL("Relu", ReluKernel);
SHOAL_REGISTER_REF_KERNEL("LeakyRelu", LeakyReluKernel);
SHOAL_REGISTER_REF_KERNEL("Clip", ClipKernel);
SHOAL_REGISTER_REF_KERNEL("Sigmoid", SigmoidKernel);
SHOAL_REGISTER_REF_KERNEL("HardSwish", HardSwishKernel);
SHOAL_REGISTER_REF_KERNEL("HardSigmoid", HardSigmoidKernel);
SHOAL_REGISTER_REF_KERNEL("Erf", ErfKernel);
SHOAL_REGISTER_REF_KERNEL("Abs", AbsKernel);
SHOAL_REGISTER_REF_KERNEL("Neg", NegKernel);
SHOAL_REGISTER_REF_KERNEL("Exp", ExpKernel);
SHOAL_REGISTER_REF_KERNEL("Tanh", TanhKernel);
SHOAL_REGISTER_REF_KERNEL("Sqrt", SqrtKernel);
SHOAL_REGISTER_REF_KERNEL("Identity", CopyKernel);
SHOAL_REGISTER_REF_KERNEL("Dropout", CopyKernel);

// Softmax along one axis (ONNX opset 13), max-subtracted so large inputs do
// not overflow exp.
Status SoftmaxKernel(const Node& node, const std::vector<ConstView>& in,
                     const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& s = in[0].shape;
  const int64_t axis = NormalizeAxis(node.attrs.GetInt("axis", -1),
                                     static_cast<int64_t>(s.size()));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
  const int64_t n = s[axis];
  std::vector<double> e(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* x = in[0].data + o * n * inner + i;
      float* y = out[0].data + o * n * inner + i;
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < n; ++j) m = std::max<double>(m, x[j * inner]);
      double sum = 0.0;
      for (int64_t j = 0; j < n; ++j) sum += e[j] = std::exp(x[j * inner] - m);
      for (int64_t j = 0; j < n; ++j)
        y[j * inner] = static_cast<float>(e[j] / sum);
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Softmax", SoftmaxKernel);

}  // namespace
}  // namespace shoal
