// Helpers shared by the reference kernels: argument checks, row-major
// strides, numpy broadcasting and sliding-window tap ranges.
#ifndef SHOAL_KERNELS_REFERENCE_REF_UTIL_H_
#define SHOAL_KERNELS_REFERENCE_REF_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "kernels/tensor_view.h"
#include "ops/window.h"
#include "util/status.h"

namespace shoal {
namespace ref {

// Checks a kernel call against the op's own shape inference: one view per
// node input and output, inputs present exactly where the node names them,
// and each output shaped as inferred. Kernels call it first and may then
// trust every shape and attribute the registration validates. An unnamed
// output of a multi-output op may have data == nullptr; it is not written.
Status CheckCall(const Node& node, const std::vector<ConstView>& in,
                 const std::vector<MutView>& out);

// An error naming the node, for what shape inference does not catch.
Status KernelError(const Node& node, const std::string& what);

// Strides of a tensor of shape `in` read as if it had shape `out` under numpy
// broadcasting: right-aligned, 0 on axes `in` lacks or has extent 1.
std::vector<int64_t> BroadcastStrides(const Shape& in, const Shape& out);

// numpy matmul of A by B: a 1-D A is a row [1, K], a 1-D B a column [K, 1]
// (the added axis is not in the output); the batch axes broadcast. Each
// product is rows x inner by inner x cols, both matrices row-major.
struct MatMulBatches {
  int64_t rows = 0, inner = 0, cols = 0;
  Shape batch;
  std::vector<int64_t> a_stride, b_stride;  // in whole matrices
  // Where product `i` (row-major over `batch`) reads A and B, in elements.
  void Offsets(int64_t i, std::vector<int64_t>* idx, int64_t* a,
               int64_t* b) const;
};
MatMulBatches MatMulShape(Shape a, Shape b);

// Splits flat row-major index `flat` of `shape` into `idx` (resized).
void Unflatten(int64_t flat, const Shape& shape, std::vector<int64_t>* idx);

// Outputs o in [*lo, *hi) whose tap at input position o * stride - pad +
// offset lies inside [0, in), for o in [0, out). Lets window loops skip
// padding without a bounds test per element.
void TapRange(int64_t in, int64_t out, int64_t stride, int64_t pad,
              int64_t offset, int64_t* lo, int64_t* hi);

// A window geometry over exactly three spatial axes (D, H, W): 1-D and 2-D
// problems get leading unit axes, so one loop nest serves every rank.
struct Window3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1};
  int64_t pad_begin[3] = {0, 0, 0}, pad_end[3] = {0, 0, 0};
  int64_t in_size() const { return in[0] * in[1] * in[2]; }
  int64_t out_size() const { return out[0] * out[1] * out[2]; }
  int64_t kernel_size() const { return kernel[0] * kernel[1] * kernel[2]; }
};

// `in_spatial` and `out_spatial` have 1 to 3 axes, as `geo` has.
Window3 ToWindow3(const WindowGeometry& geo,
                  const std::vector<int64_t>& in_spatial,
                  const std::vector<int64_t>& out_spatial);

}  // namespace ref
}  // namespace shoal

#endif  // SHOAL_KERNELS_REFERENCE_REF_UTIL_H_
