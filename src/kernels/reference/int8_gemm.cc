// Gemm and MatMul on int8 values (int8_kernels.h), with the f32 kernels'
// conventions (gemm.cc): Gemm's transposes, alpha, beta and a C broadcast
// to [M, N]; MatMul's 1-D operands and broadcast batch axes.
#include <algorithm>
#include <vector>

#include "kernels/reference/int8_kernels.h"
#include "kernels/reference/ref_util.h"

namespace shoal {
namespace {

// sum_k A[m * a_row + k * a_col] * B[k * b_row + n * b_col] over centered
// int8 values; the strides express transposes.
struct IntProduct {
  int64_t rows, inner, cols;
  int64_t a_row, a_col, b_row, b_col;
  int64_t Dot(const int32_t* a, const int32_t* b, int64_t m, int64_t n) const {
    int64_t sum = 0;
    for (int64_t k = 0; k < inner; ++k)
      sum += int64_t{a[m * a_row + k * a_col]} * b[k * b_row + n * b_col];
    return sum;
  }
};

// Y = alpha * (s_x s_w[n]) A'B' + beta * C; n indexes B's output axis.
Status Int8GemmKernel(const Node& node, const std::vector<ConstView>& in,
                      const QuantParams& xp, const QuantParams& wp,
                      const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  RETURN_IF_ERROR(ref::CheckInt8Params(node, xp, wp, in[1].shape));
  ASSIGN_OR_RETURN(std::vector<int32_t> a,
                   ref::CenteredInt8(node, 0, in[0], xp));
  ASSIGN_OR_RETURN(std::vector<int32_t> b,
                   ref::CenteredInt8(node, 1, in[1], wp));
  const Shape& as = in[0].shape;
  const Shape& bs = in[1].shape;
  const bool ta = node.attrs.GetInt("transA", 0) != 0;
  const bool tb = node.attrs.GetInt("transB", 0) != 0;
  const double alpha = node.attrs.GetFloat("alpha", 1.f);
  const double beta = node.attrs.GetFloat("beta", 1.f);
  IntProduct p;
  p.rows = out[0].shape[0];
  p.cols = out[0].shape[1];
  p.inner = ta ? as[0] : as[1];
  p.a_row = ta ? 1 : as[1];
  p.a_col = ta ? as[1] : 1;
  p.b_row = tb ? 1 : bs[1];
  p.b_col = tb ? bs[1] : 1;
  const bool has_c = in.size() > 2 && in[2].present();
  std::vector<int64_t> c_strides;
  if (has_c) c_strides = ref::BroadcastStrides(in[2].shape, out[0].shape);
  for (int64_t m = 0; m < p.rows; ++m) {
    for (int64_t n = 0; n < p.cols; ++n) {
      const int64_t acc = p.Dot(a.data(), b.data(), m, n);
      RETURN_IF_ERROR(ref::CheckInt32(node, acc));
      double v =
          alpha * (static_cast<double>(acc) * ref::Int8OutputScale(xp, wp, n));
      if (has_c) v += beta * in[2].data[m * c_strides[0] + n * c_strides[1]];
      out[0].data[m * p.cols + n] = static_cast<float>(v);
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_INT8_KERNEL("Gemm", Int8GemmKernel);

// numpy matmul: a 1-D A is a row [1, K], a 1-D B a column [K, 1]; batch
// axes broadcast. A per-channel B is scaled along its last axis (N).
Status Int8MatMulKernel(const Node& node, const std::vector<ConstView>& in,
                        const QuantParams& xp, const QuantParams& wp,
                        const std::vector<MutView>& out) {
  RETURN_IF_ERROR(ref::CheckCall(node, in, out));
  RETURN_IF_ERROR(ref::CheckInt8Params(node, xp, wp, in[1].shape));
  ASSIGN_OR_RETURN(std::vector<int32_t> ca,
                   ref::CenteredInt8(node, 0, in[0], xp));
  ASSIGN_OR_RETURN(std::vector<int32_t> cb,
                   ref::CenteredInt8(node, 1, in[1], wp));
  Shape a = in[0].shape, b = in[1].shape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  IntProduct p;
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
        const int64_t acc =
            p.Dot(ca.data() + ia * a_size, cb.data() + ib * b_size, m, n);
        RETURN_IF_ERROR(ref::CheckInt32(node, acc));
        y[m * p.cols + n] = static_cast<float>(static_cast<double>(acc) *
                                               ref::Int8OutputScale(xp, wp, n));
      }
    }
  }
  return Status::Ok();
}

SHOAL_REGISTER_INT8_KERNEL("MatMul", Int8MatMulKernel);

}  // namespace
}  // namespace shoal
