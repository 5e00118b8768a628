// Resize, nearest and n-linear: separable, one axis at a time, in double.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

// Where output index `o` of an axis reads, in input coordinates (ONNX's
// coordinate_transformation_mode); `scale` is output / input.
double SourceCoord(const std::string& mode, int64_t o, int64_t in, int64_t out,
                   double scale) {
  if (mode == "align_corners") {
    return out == 1 ? 0.0 : o * static_cast<double>(in - 1) / (out - 1);
  }
  if (mode == "asymmetric") return o / scale;
  if (mode == "pytorch_half_pixel" && out == 1) return 0.0;
  return (o + 0.5) / scale - 0.5;  // half_pixel, pytorch_half_pixel
}

int64_t Nearest(const std::string& mode, double x) {
  const double fl = std::floor(x);
  if (mode == "floor") return static_cast<int64_t>(fl);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(x));
  if (x - fl == 0.5) {
    return static_cast<int64_t>(mode == "round_prefer_ceil" ? fl + 1 : fl);
  }
  return static_cast<int64_t>(std::round(x));
}

struct Tap {
  int64_t i0, i1;
  double w;  // weight of i1; i0 gets 1 - w
};

Status ResizeKernel(const Node& node, const std::vector<ConstView>& in,
                    const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const bool linear = node.attrs.GetString("mode", "nearest") == "linear";
  const std::string ct =
      node.attrs.GetString("coordinate_transformation_mode", "half_pixel");
  const std::string nm =
      node.attrs.GetString("nearest_mode", "round_prefer_floor");
  const std::vector<float> scales = node.attrs.GetFloats("scales");
  Shape cur = in[0].shape;
  const Shape& ys = out[0].shape;
  std::vector<double> buf(in[0].data, in[0].data + in[0].size());
  for (size_t a = 0; a < cur.size(); ++a) {
    const int64_t n_in = cur[a], n_out = ys[a];
    const double scale = scales.empty() ? static_cast<double>(n_out) / n_in
                                        : static_cast<double>(scales[a]);
    if (n_in == n_out && scale == 1.0) continue;  // every mode maps o to o
    std::vector<Tap> taps(n_out);
    for (int64_t o = 0; o < n_out; ++o) {
      const double x = SourceCoord(ct, o, n_in, n_out, scale);
      if (linear) {
        const double c = std::clamp(x, 0.0, static_cast<double>(n_in - 1));
        const int64_t i0 = static_cast<int64_t>(std::floor(c));
        taps[o] = {i0, std::min(i0 + 1, n_in - 1), c - i0};
      } else {
        const int64_t i = std::clamp<int64_t>(Nearest(nm, x), 0, n_in - 1);
        taps[o] = {i, i, 0.0};
      }
    }
    int64_t outer = 1, inner = 1;
    for (size_t i = 0; i < a; ++i) outer *= cur[i];
    for (size_t i = a + 1; i < cur.size(); ++i) inner *= cur[i];
    std::vector<double> next(outer * n_out * inner);
    for (int64_t p = 0; p < outer; ++p) {
      for (int64_t o = 0; o < n_out; ++o) {
        const double* r0 = &buf[(p * n_in + taps[o].i0) * inner];
        const double* r1 = &buf[(p * n_in + taps[o].i1) * inner];
        double* dst = &next[(p * n_out + o) * inner];
        const double w = taps[o].w;
        for (int64_t q = 0; q < inner; ++q) {
          dst[q] = w == 0.0 ? r0[q] : r0[q] * (1.0 - w) + r1[q] * w;
        }
      }
    }
    buf.swap(next);
    cur[a] = n_out;
  }
  for (int64_t i = 0; i < out[0].size(); ++i) {
    out[0].data[i] = static_cast<float>(buf[i]);
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Resize", ResizeKernel);

}  // namespace
}  // namespace shoal
