// Ops that move data without arithmetic: Concat, Flatten, Reshape,
// Transpose, Split, SpaceToDepth. (Slice and Pad: slice_pad.cc.)
#include <algorithm>
#include <numeric>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"
#include "ops/axis.h"

namespace shoal {
namespace {

// Elements before `axis` (outer) and after it (inner).
void OuterInner(const Shape& s, int64_t axis, int64_t* outer, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int64_t i = 0; i < axis; ++i) *outer *= s[i];
  for (size_t i = axis + 1; i < s.size(); ++i) *inner *= s[i];
}

Status ConcatKernel(const Node& node, const std::vector<ConstView>& in,
                    const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& ys = out[0].shape;
  const int64_t axis =
      NormalizeAxis(node.attrs.GetInt("axis"), static_cast<int64_t>(ys.size()));
  int64_t outer, inner;
  OuterInner(ys, axis, &outer, &inner);
  const int64_t y_block = ys[axis] * inner;
  int64_t offset = 0;  // of this input's block within a row of the output
  for (const ConstView& x : in) {
    const int64_t block = x.shape[axis] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      std::copy(x.data + o * block, x.data + (o + 1) * block,
                out[0].data + o * y_block + offset);
    }
    offset += block;
  }
  return Status::Ok();
}

// Flatten and Reshape only relabel the shape of a row-major buffer.
Status CopyKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  std::copy(in[0].data, in[0].data + in[0].size(), out[0].data);
  return Status::Ok();
}

Status TransposeKernel(const Node& node, const std::vector<ConstView>& in,
                       const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& xs = in[0].shape;
  std::vector<int64_t> perm = node.attrs.GetInts("perm");
  if (perm.empty()) {
    perm.resize(xs.size());
    std::iota(perm.rbegin(), perm.rend(), 0);
  }
  const std::vector<int64_t> xstride = Strides(xs);
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < out[0].size(); ++i) {
    ref::Unflatten(i, out[0].shape, &idx);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d) src += idx[d] * xstride[perm[d]];
    out[0].data[i] = in[0].data[src];
  }
  return Status::Ok();
}

Status SplitKernel(const Node& node, const std::vector<ConstView>& in,
                   const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const Shape& xs = in[0].shape;
  const int64_t axis = NormalizeAxis(node.attrs.GetInt("axis", 0),
                                     static_cast<int64_t>(xs.size()));
  int64_t outer, inner;
  OuterInner(xs, axis, &outer, &inner);
  const int64_t x_block = xs[axis] * inner;
  int64_t offset = 0;
  for (const MutView& y : out) {
    const int64_t block = y.shape[axis] * inner;
    if (y.data) {
      for (int64_t o = 0; o < outer; ++o) {
        const float* src = in[0].data + o * x_block + offset;
        std::copy(src, src + block, y.data + o * block);
      }
    }
    offset += block;
  }
  return Status::Ok();
}

// ONNX: reshape [N, C, H/b, b, W/b, b], transpose to [N, b, b, C, H/b, W/b],
// reshape to [N, b*b*C, H/b, W/b]; so output channel (i*b + j)*C + c holds
// x[n, c, h*b + i, w*b + j].
Status SpaceToDepthKernel(const Node& node, const std::vector<ConstView>& in,
                          const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const int64_t b = node.attrs.GetInt("blocksize");
  const Shape& xs = in[0].shape;
  const int64_t n_max = xs[0], c_max = xs[1], h_in = xs[2], w_in = xs[3];
  const int64_t h_out = h_in / b, w_out = w_in / b;
  float* y = out[0].data;
  for (int64_t n = 0; n < n_max; ++n)
    for (int64_t i = 0; i < b; ++i)
      for (int64_t j = 0; j < b; ++j)
        for (int64_t c = 0; c < c_max; ++c)
          for (int64_t h = 0; h < h_out; ++h)
            for (int64_t w = 0; w < w_out; ++w) {
              *y++ = in[0].data[((n * c_max + c) * h_in + h * b + i) * w_in +
                                w * b + j];
            }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Concat", ConcatKernel);
SHOAL_REGISTER_REF_KERNEL("Flatten", CopyKernel);
SHOAL_REGISTER_REF_KERNEL("Reshape", CopyKernel);
SHOAL_REGISTER_REF_KERNEL("Transpose", TransposeKernel);
SHOAL_REGISTER_REF_KERNEL("Split", SplitKernel);
SHOAL_REGISTER_REF_KERNEL("SpaceToDepth", SpaceToDepthKernel);

}  // namespace
}  // namespace shoal
