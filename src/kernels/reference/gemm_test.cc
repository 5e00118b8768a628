#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

// A = [[1, 2, 3], [4, 5, 6]], B = [[1, 2], [3, 4], [5, 6]]: AB = [[22, 28],
// [49, 64]].
const Tensor kA({2, 3}, {1, 2, 3, 4, 5, 6});
const Tensor kB({3, 2}, {1, 2, 3, 4, 5, 6});
const Tensor kAt({3, 2}, {1, 4, 2, 5, 3, 6});
const Tensor kBt({2, 3}, {1, 3, 5, 2, 4, 6});

TEST(RefGemmTest, PlainProduct) {
  EXPECT_TRUE(Near(RunOne("Gemm", {&kA, &kB}), {2, 2}, {22, 28, 49, 64}));
}

TEST(RefGemmTest, Transposes) {
  EXPECT_TRUE(
      Near(RunOne("Gemm", {&kAt, &kB}, MakeAttrs({{"transA", int64_t{1}}})),
           {2, 2}, {22, 28, 49, 64}));
  EXPECT_TRUE(
      Near(RunOne("Gemm", {&kA, &kBt}, MakeAttrs({{"transB", int64_t{1}}})),
           {2, 2}, {22, 28, 49, 64}));
  EXPECT_TRUE(
      Near(RunOne("Gemm", {&kAt, &kBt},
                  MakeAttrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}})),
           {2, 2}, {22, 28, 49, 64}));
}

TEST(RefGemmTest, AlphaBetaAndBroadcastC) {
  const Attrs ab = MakeAttrs({{"alpha", 0.5f}, {"beta", 2.f}});
  const Tensor row({2}, {1, 10}), col({2, 1}, {1, 10}),
      full({2, 2}, {1, 2, 3, 4});
  const Tensor scalar({}, {1});
  EXPECT_TRUE(
      Near(RunOne("Gemm", {&kA, &kB, &row}, ab), {2, 2}, {13, 34, 26.5f, 52}));
  EXPECT_TRUE(
      Near(RunOne("Gemm", {&kA, &kB, &col}, ab), {2, 2}, {13, 16, 44.5f, 52}));
  EXPECT_TRUE(
      Near(RunOne("Gemm", {&kA, &kB, &full}, ab), {2, 2}, {13, 18, 30.5f, 40}));
  EXPECT_TRUE(Near(RunOne("Gemm", {&kA, &kB, &scalar}, ab), {2, 2},
                   {13, 16, 26.5f, 34}));
  // Absent C: beta has nothing to scale.
  EXPECT_TRUE(Near(RunOne("Gemm", {&kA, &kB, nullptr}, ab), {2, 2},
                   {11, 14, 24.5f, 32}));
}

TEST(RefMatMulTest, Matrices) {
  EXPECT_TRUE(Near(RunOne("MatMul", {&kA, &kB}), {2, 2}, {22, 28, 49, 64}));
}

TEST(RefMatMulTest, OneDimensionalOperands) {
  const Tensor v({3}, {1, 0, -1}), u({2}, {1, 1});
  EXPECT_TRUE(Near(RunOne("MatMul", {&v, &kB}), {2}, {-4, -4}));
  EXPECT_TRUE(Near(RunOne("MatMul", {&kA, &v}), {2}, {-2, -2}));
  EXPECT_TRUE(Near(RunOne("MatMul", {&u, &u}), {}, {2}));
}

TEST(RefMatMulTest, BatchBroadcast) {
  // [2, 1, 2, 3] x [3, 3, 2] -> [2, 3, 2, 2]: every A batch meets every B.
  Tensor a({2, 1, 2, 3});
  for (int i = 0; i < 6; ++i) {
    a.data[i] = kA.data[i];
    a.data[6 + i] = -kA.data[i];
  }
  Tensor b({3, 3, 2});
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 6; ++i) b.data[j * 6 + i] = (j + 1) * kB.data[i];
  const Tensor y = RunOne("MatMul", {&a, &b});
  ASSERT_EQ(y.shape, (Shape{2, 3, 2, 2}));
  const float ab[4] = {22, 28, 49, 64};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k)
        EXPECT_FLOAT_EQ(y.data[(i * 3 + j) * 4 + k],
                        (i ? -1 : 1) * (j + 1) * ab[k]);
  // A 1-D operand against a batch.
  const Tensor v({3}, {1, 0, -1});
  EXPECT_TRUE(
      Near(RunOne("MatMul", {&v, &b}), {3, 2}, {-4, -4, -8, -8, -12, -12}));
}

}  // namespace
}  // namespace shoal
