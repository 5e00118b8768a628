// MaxPool, AveragePool (1-D to 3-D), GlobalAveragePool, GlobalMaxPool.
#include <algorithm>
#include <limits>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

// Calls fn(offset in the input plane) for each tap of output `o` that lies
// inside the input; returns how many taps lie inside [-pad_begin, in +
// pad_end), the padded extent.
template <typename Fn>
int64_t ForEachTap(const ref::Window3& g, const int64_t o[3], Fn fn) {
  int64_t start[3], padded = 1;
  for (int a = 0; a < 3; ++a) {
    start[a] = o[a] * g.stride[a] - g.pad_begin[a];
    int64_t n = 0;
    for (int64_t k = 0; k < g.kernel[a]; ++k) {
      const int64_t i = start[a] + k * g.dilation[a];
      if (i >= -g.pad_begin[a] && i < g.in[a] + g.pad_end[a]) ++n;
    }
    padded *= n;
  }
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
    const int64_t id = start[0] + kd * g.dilation[0];
    if (id < 0 || id >= g.in[0]) continue;
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
      const int64_t ih = start[1] + kh * g.dilation[1];
      if (ih < 0 || ih >= g.in[1]) continue;
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
        const int64_t iw = start[2] + kw * g.dilation[2];
        if (iw < 0 || iw >= g.in[2]) continue;
        fn((id * g.in[1] + ih) * g.in[2] + iw);
      }
    }
  }
  return padded;
}

enum class PoolKind { kMax, kAverage };

template <PoolKind kind>
Status PoolKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ConstView& x = in[0];
  const MutView& y = out[0];
  const std::vector<int64_t> in_spatial(x.shape.begin() + 2, x.shape.end());
  ASSIGN_OR_RETURN(WindowGeometry geo, ResolveWindow(node, in_spatial, {}));
  const ref::Window3 g =
      ref::ToWindow3(geo, in_spatial, {y.shape.begin() + 2, y.shape.end()});
  const bool include_pad = node.attrs.GetInt("count_include_pad", 0) != 0;
  const int64_t planes = x.shape[0] * x.shape[1];
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x.data + p * g.in_size();
    float* yp = y.data + p * g.out_size();
    int64_t o[3];
    for (o[0] = 0; o[0] < g.out[0]; ++o[0])
      for (o[1] = 0; o[1] < g.out[1]; ++o[1])
        for (o[2] = 0; o[2] < g.out[2]; ++o[2]) {
          const int64_t at = (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];
          if constexpr (kind == PoolKind::kMax) {
            // A window wholly in padding (possible only with dilation) gives
            // the lowest float, as ONNX Runtime does.
            float m = std::numeric_limits<float>::lowest();
            ForEachTap(g, o, [&](int64_t i) { m = std::max(m, xp[i]); });
            yp[at] = m;
          } else {
            double sum = 0.0;
            int64_t inside = 0;
            const int64_t padded = ForEachTap(g, o, [&](int64_t i) {
              sum += xp[i];
              ++inside;
            });
            // count_include_pad counts padding but not the part of a
            // ceil_mode window beyond it (PyTorch, ONNX Runtime).
            const int64_t count = include_pad ? padded : inside;
            yp[at] = count > 0 ? static_cast<float>(sum / count) : 0.f;
          }
        }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("MaxPool", PoolKernel<PoolKind::kMax>);
SHOAL_REGISTER_REF_KERNEL("AveragePool", PoolKernel<PoolKind::kAverage>);

template <PoolKind kind>
Status GlobalPoolKernel(const Node& node, const std::vector<ConstView>& in,
                        const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ConstView& x = in[0];
  const int64_t planes = x.shape[0] * x.shape[1];
  const int64_t plane = planes > 0 ? x.size() / planes : 0;
  for (int64_t p = 0; p < planes; ++p) {
    const float* xp = x.data + p * plane;
    if constexpr (kind == PoolKind::kMax) {
      out[0].data[p] = plane > 0 ? *std::max_element(xp, xp + plane)
                                 : std::numeric_limits<float>::lowest();
    } else {
      double sum = 0.0;
      for (int64_t i = 0; i < plane; ++i) sum += xp[i];
      out[0].data[p] = plane > 0 ? static_cast<float>(sum / plane) : 0.f;
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("GlobalAveragePool",
                          GlobalPoolKernel<PoolKind::kAverage>);
SHOAL_REGISTER_REF_KERNEL("GlobalMaxPool", GlobalPoolKernel<PoolKind::kMax>);

}  // namespace
}  // namespace shoal
