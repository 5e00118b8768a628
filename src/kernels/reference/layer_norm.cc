// LayerNormalization over axes [axis, rank), statistics in double.
#include <cmath>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// y = (x - mean) / sqrt(var + epsilon) * Scale + B per row of the
// normalised axes; Scale and B broadcast to those axes.
Status LayerNormKernel(const Node& node, const std::vector<ConstView>& in,
                       const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& xs = in[0].shape;
  const int64_t r = static_cast<int64_t>(xs.size());
  const int64_t axis = NormalizeAxis(node.attrs.GetInt("axis", -1), r);
  const double eps = node.attrs.GetFloat("epsilon", 1e-5f);
  const Shape inner_shape(xs.begin() + axis, xs.end());
  const int64_t inner = NumElements(inner_shape);
  const int64_t outer = inner > 0 ? in[0].size() / inner : 0;
  // Scale and B expanded to the normalised axes, once.
  std::vector<std::vector<float>> param(3);
  for (size_t p = 1; p < in.size() && p < 3; ++p) {
    if (!in[p].present()) continue;
    const auto strides = ref::BroadcastStrides(in[p].shape, inner_shape);
    std::vector<int64_t> idx;
    param[p].resize(inner);
    for (int64_t i = 0; i < inner; ++i) {
      ref::Unflatten(i, inner_shape, &idx);
      int64_t at = 0;
      for (size_t d = 0; d < idx.size(); ++d) at += idx[d] * strides[d];
      param[p][i] = in[p].data[at];
    }
  }
  for (int64_t o = 0; o < outer; ++o) {
    const float* x = in[0].data + o * inner;
    float* y = out[0].data + o * inner;
    double mean = 0.0;
    for (int64_t i = 0; i < inner; ++i) mean += x[i];
    mean /= inner;
    double var = 0.0;
    for (int64_t i = 0; i < inner; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= inner;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      double v = (x[i] - mean) * inv * param[1][i];
      if (!param[2].empty()) v += param[2][i];
      y[i] = static_cast<float>(v);
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("LayerNormalization", LayerNormKernel);

}  // namespace
}  // namespace shoal
