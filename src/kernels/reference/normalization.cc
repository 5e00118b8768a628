// BatchNormalization (inference form) and LRN, computed in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

// Inputs X, scale, B, mean, var:
// y = scale * (x - mean) / sqrt(var + epsilon) + B, per channel (axis 1).
Status BatchNormKernel(const Node& node, const std::vector<ConstView>& in,
                       const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ConstView& x = in[0];
  const double eps = node.attrs.GetFloat("epsilon", 1e-5f);
  const int64_t batch = x.shape[0], channels = x.shape[1];
  const int64_t plane =
      batch * channels > 0 ? x.size() / (batch * channels) : 0;
  for (int64_t c = 0; c < channels; ++c) {
    const double mul = in[1].data[c] / std::sqrt(in[4].data[c] + eps);
    const double add = in[2].data[c] - mul * in[3].data[c];
    for (int64_t n = 0; n < batch; ++n) {
      const float* xp = x.data + (n * channels + c) * plane;
      float* yp = out[0].data + (n * channels + c) * plane;
      for (int64_t i = 0; i < plane; ++i) {
        yp[i] = static_cast<float>(mul * xp[i] + add);
      }
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("BatchNormalization", BatchNormKernel);

// ONNX LRN: square_sum[c] sums x^2 over channels
// c - floor((size - 1) / 2) .. c + ceil((size - 1) / 2), clipped to [0, C);
// y = x / (bias + alpha / size * square_sum) ^ beta.
Status LrnKernel(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ConstView& x = in[0];
  const int64_t size = node.attrs.GetInt("size");
  const double alpha = node.attrs.GetFloat("alpha", 1e-4f);
  const double beta = node.attrs.GetFloat("beta", 0.75f);
  const double bias = node.attrs.GetFloat("bias", 1.f);
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  const int64_t batch = x.shape[0], channels = x.shape[1];
  const int64_t plane =
      batch * channels > 0 ? x.size() / (batch * channels) : 0;
  for (int64_t n = 0; n < batch; ++n) {
    const float* xn = x.data + n * channels * plane;
    float* yn = out[0].data + n * channels * plane;
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t lo = std::max<int64_t>(0, c - before);
      const int64_t hi = std::min(channels - 1, c + after);
      for (int64_t i = 0; i < plane; ++i) {
        double square_sum = 0.0;
        for (int64_t j = lo; j <= hi; ++j) {
          const double v = xn[j * plane + i];
          square_sum += v * v;
        }
        const double denom = std::pow(bias + alpha / size * square_sum, beta);
        yn[c * plane + i] = static_cast<float>(xn[c * plane + i] / denom);
      }
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("LRN", LrnKernel);

}  // namespace
}  // namespace shoal
