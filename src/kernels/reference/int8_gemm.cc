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
  const ref::MatMulBatches mb = ref::MatMulShape(in[0].shape, in[1].shape);
  IntProduct p;
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
        const int64_t acc = p.Dot(ca.data() + a_at, cb.data() + b_at, m, n);
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
