// Gemm and MatMul. Dot products are summed in double, as in conv.cc.
#include <algorithm>
#include <vector>

#include "kernels/reference/ref_util.h"
#include "kernels/reference/reference_kernels.h"

namespace shoal {
namespace {

// Y[m, n] = sum_k A[m * a_row + k * a_col] * B[k * b_row + n * b_col] over one
// [rows, inner] x [inner, cols] product; the strides express transposes.
struct MatrixProduct {
  int64_t rows, inner, cols;
  int64_t a_row, a_col, b_row, b_col;
  double Dot(const float* a, const float* b, int64_t m, int64_t n) const {
    double sum = 0.0;
    for (int64_t k = 0; k < inner; ++k) {
      sum += static_cast<double>(a[m * a_row + k * a_col]) *
             b[k * b_row + n * b_col];
    }
    return sum;
  }
};

// Y = alpha * A' B' + beta * C, C broadcast to [M, N].
Status GemmKernel(const Node& node, const std::vector<ConstView>& in,
                  const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ConstView& a = in[0];
  const ConstView& b = in[1];
  const bool ta = node.attrs.GetInt("transA", 0) != 0;
  const bool tb = node.attrs.GetInt("transB", 0) != 0;
  const double alpha = node.attrs.GetFloat("alpha", 1.f);
  const double beta = node.attrs.GetFloat("beta", 1.f);
  MatrixProduct p;
  p.rows = out[0].shape[0];
  p.cols = out[0].shape[1];
  p.inner = ta ? a.shape[0] : a.shape[1];
  // A is stored [M, K], or [K, M] when transposed; likewise B.
  p.a_row = ta ? 1 : a.shape[1];
  p.a_col = ta ? a.shape[1] : 1;
  p.b_row = tb ? 1 : b.shape[1];
  p.b_col = tb ? b.shape[1] : 1;
  const bool has_c = in.size() > 2 && in[2].present();
  std::vector<int64_t> c_strides;
  if (has_c) c_strides = ref::BroadcastStrides(in[2].shape, out[0].shape);
  for (int64_t m = 0; m < p.rows; ++m) {
    for (int64_t n = 0; n < p.cols; ++n) {
      double v = alpha * p.Dot(a.data, b.data, m, n);
      if (has_c) v += beta * in[2].data[m * c_strides[0] + n * c_strides[1]];
      out[0].data[m * p.cols + n] = static_cast<float>(v);
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("Gemm", GemmKernel);

// numpy matmul: a 1-D A is a row [1, K], a 1-D B a column [K, 1] (the added
// axis is not in the output); the batch axes broadcast.
Status MatMulKernel(const Node& node, const std::vector<ConstView>& in,
                    const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  const ref::MatMulBatches mb = ref::MatMulShape(in[0].shape, in[1].shape);
  MatrixProduct p;
  p.rows = mb.rows;
  p.inner = mb.inner;
  p.cols = mb.cols;
  p.a_row = p.inner;
  p.a_col = 1;
  p.b_row = p.cols;
  p.b_col = 1;
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < NumElements(mb.batch); ++i) {
    int64_t a_at = 0, b_at = 0;
    mb.Offsets(i, &idx, &a_at, &b_at);
    float* y = out[0].data + i * p.rows * p.cols;
    for (int64_t m = 0; m < p.rows; ++m) {
      for (int64_t n = 0; n < p.cols; ++n) {
        y[m * p.cols + n] = static_cast<float>(
            p.Dot(in[0].data + a_at, in[1].data + b_at, m, n));
      }
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("MatMul", MatMulKernel);

}  // namespace
}  // namespace shoal
