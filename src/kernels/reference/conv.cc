// Conv: 1-D/2-D/3-D, strides, pads (auto_pad included), dilations, groups.
//
// Sums are kept in double: the reference is the oracle other backends are
// held to (1e-4 relative), so its own rounding should be far below that even
// for long reductions (VGG's 4608-term dot products). A plain float loop
// would not vectorise either, so double costs nothing in speed here.
#include <algorithm>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

// acc[o] += w * x[tap of o] for every output o whose tap (kd, kh, kw) lies
// inside the input. `x` is one input plane, `acc` one output plane.
void AccumulateTap(const ref::Window3& g, const int64_t k[3], double w,
                   const float* x, double* acc) {
  int64_t lo[3], hi[3], off[3];
  for (int a = 0; a < 3; ++a) {
    off[a] = k[a] * g.dilation[a] - g.pad_begin[a];
    ref::TapRange(g.in[a], g.out[a], g.stride[a], g.pad_begin[a],
                  k[a] * g.dilation[a], &lo[a], &hi[a]);
  }
  for (int64_t od = lo[0]; od < hi[0]; ++od) {
    const int64_t id = od * g.stride[0] + off[0];
    for (int64_t oh = lo[1]; oh < hi[1]; ++oh) {
      const int64_t ih = oh * g.stride[1] + off[1];
      const float* row = x + (id * g.in[1] + ih) * g.in[2];
      double* out_row = acc + (od * g.out[1] + oh) * g.out[2];
      for (int64_t ow = lo[2]; ow < hi[2]; ++ow) {
        out_row[ow] += w * row[ow * g.stride[2] + off[2]];
      }
    }
  }
}

Status ConvKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ConstView& x = in[0];
  const ConstView& w = in[1];
  const float* bias = in.size() > 2 ? in[2].data : nullptr;
  const MutView& y = out[0];
  const std::vector<int64_t> in_spatial(x.shape.begin() + 2, x.shape.end());
  ASSIGN_OR_RETURN(
      WindowGeometry geo,
      ResolveWindow(node, in_spatial, {w.shape.begin() + 2, w.shape.end()}));
  const ref::Window3 g =
      ref::ToWindow3(geo, in_spatial, {y.shape.begin() + 2, y.shape.end()});

  const int64_t batch = x.shape[0], channels = x.shape[1], maps = w.shape[0];
  const int64_t group = node.attrs.GetInt("group", 1);
  const int64_t group_channels = channels / group, group_maps = maps / group;
  std::vector<double> acc(g.out_size());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      std::fill(acc.begin(), acc.end(), bias ? bias[m] : 0.0);
      const int64_t first_channel = (m / group_maps) * group_channels;
      for (int64_t c = 0; c < group_channels; ++c) {
        const float* xc =
            x.data + (n * channels + first_channel + c) * g.in_size();
        const float* wc = w.data + (m * group_channels + c) * g.kernel_size();
        int64_t k[3];
        for (k[0] = 0; k[0] < g.kernel[0]; ++k[0])
          for (k[1] = 0; k[1] < g.kernel[1]; ++k[1])
            for (k[2] = 0; k[2] < g.kernel[2]; ++k[2]) {
              const double wv =
                  wc[(k[0] * g.kernel[1] + k[1]) * g.kernel[2] + k[2]];
              AccumulateTap(g, k, wv, xc, acc.data());
            }
      }
      std::copy(acc.begin(), acc.end(), y.data + (n * maps + m) * g.out_size());
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Conv", ConvKernel);

}  // namespace
}  // namespace shoal
