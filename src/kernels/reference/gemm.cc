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
  Shape a = in[0].shape, b = in[1].shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatrixProduct p;
  p.rows = a[a.size() - 2];
  p.inner = a.back();
  p.cols = b.back();
  p.a_row = p.inner;
  p.a_col = 1;
  p.b_row = p.cols;
  p.b_col = 1;
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const size_t r = std::max(a_batch.size(), b_batch.size());
  Shape batch(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da =
        i + a_batch.size() >= r ? a_batch[i + a_batch.size() - r] : 1;
    const int64_t db =
        i + b_batch.size() >= r ? b_batch[i + b_batch.size() - r] : 1;
    batch[i] = std::max(da, db);
  }
  // Strides in whole matrices.
  const std::vector<int64_t> sa = ref::BroadcastStrides(a_batch, batch);
  const std::vector<int64_t> sb = ref::BroadcastStrides(b_batch, batch);
  std::vector<int64_t> idx;
  const int64_t a_size = p.rows * p.inner, b_size = p.inner * p.cols;
  for (int64_t i = 0; i < NumElements(batch); ++i) {
    ref::Unflatten(i, batch, &idx);
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      ia += idx[d] * sa[d];
      ib += idx[d] * sb[d];
    }
    float* y = out[0].data + i * p.rows * p.cols;
    for (int64_t m = 0; m < p.rows; ++m) {
      for (int64_t n = 0; n < p.cols; ++n) {
        y[m * p.cols + n] = static_cast<float>(
            p.Dot(in[0].data + ia * a_size, in[1].data + ib * b_size, m, n));
      }
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_REF_KERNEL("MatMul", MatMulKernel);

}  // namespace
}  // namespace shoal
