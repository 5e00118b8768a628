// Conv on int8 values (int8_kernels.h): 1-D/2-D/3-D, strides, pads,
// dilations, groups, as the f32 kernel (conv.cc) takes them. A padded tap
// contributes nothing: ONNX's ConvInteger pads with the zero point, and
// DequantizeLinear's padding is 0.0, which is the zero point dequantized.
#include <vector>

#include "kernels/reference/int8_kernels.h"
#include "kernels/reference/ref_util.h"

namespace shoal {
namespace {

Status Int8ConvKernel(const Node& node, const std::vector<ConstView>& in,
                      const QuantParams& xp, const QuantParams& wp,
                      const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  RETURN_IF_ERROR(ref::CheckInt8Params(node, xp, wp, in[1].shape));
  ASSIGN_OR_RETURN(std::vector<int32_t> x,
                   ref::CenteredInt8(node, 0, in[0], xp));
  ASSIGN_OR_RETURN(std::vector<int32_t> w,
                   ref::CenteredInt8(node, 1, in[1], wp));
  const Shape& xs = in[0].shape;
  const Shape& ws = in[1].shape;
  const float* bias = in.size() > 2 ? in[2].data : nullptr;
  const MutView& y = out[0];
  const std::vector<int64_t> in_spatial(xs.begin() + 2, xs.end());
  ASSIGN_OR_RETURN(WindowGeometry geo,
                   ResolveWindow(node, in_spatial, {ws.begin() + 2, ws.end()}));
  const ref::Window3 g =
      ref::ToWindow3(geo, in_spatial, {y.shape.begin() + 2, y.shape.end()});

  const int64_t batch = xs[0], channels = xs[1], maps = ws[0];
  const int64_t group = node.attrs.GetInt("group", 1);
  const int64_t group_channels = channels / group, group_maps = maps / group;
  int64_t o[3], k[3], i[3];
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t m = 0; m < maps; ++m) {
      const int64_t first_channel = (m / group_maps) * group_channels;
      const double scale = ref::Int8OutputScale(xp, wp, m);
      float* ym = y.data + (n * maps + m) * g.out_size();
      for (o[0] = 0; o[0] < g.out[0]; ++o[0])
        for (o[1] = 0; o[1] < g.out[1]; ++o[1])
          for (o[2] = 0; o[2] < g.out[2]; ++o[2]) {
            int64_t acc = 0;
            for (int64_t c = 0; c < group_channels; ++c) {
              const int32_t* xc =
                  x.data() + (n * channels + first_channel + c) * g.in_size();
              const int32_t* wc =
                  w.data() + (m * group_channels + c) * g.kernel_size();
              for (k[0] = 0; k[0] < g.kernel[0]; ++k[0])
                for (k[1] = 0; k[1] < g.kernel[1]; ++k[1])
                  for (k[2] = 0; k[2] < g.kernel[2]; ++k[2]) {
                    bool inside = true;
                    for (int a = 0; a < 3; ++a) {
                      i[a] = o[a] * g.stride[a] - g.pad_begin[a] +
                             k[a] * g.dilation[a];
                      inside = inside && i[a] >= 0 && i[a] < g.in[a];
                    }
                    if (!inside) continue;
                    acc +=
                        int64_t{xc[(i[0] * g.in[1] + i[1]) * g.in[2] + i[2]]} *
                        wc[(k[0] * g.kernel[1] + k[1]) * g.kernel[2] + k[2]];
                  }
            }
            RETURN_IF_ERROR(ref::CheckInt32(node, acc));
            ym[(o[0] * g.out[1] + o[1]) * g.out[2] + o[2]] = static_cast<float>(
                static_cast<double>(acc) * scale + (bias ? bias[m] : 0.0));
          }
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_INT8_KERNEL("Conv", Int8ConvKernel);

}  // namespace
}  // namespace shoal
