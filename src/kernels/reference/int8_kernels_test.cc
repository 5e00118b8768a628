// The int8 kernels on hand-computed integer sums (scales powers of two, so
// the results are exact), their errors, and random cases against the f32
// evaluation of the same QDQ layer (DQ both operands, run the f32 kernel).
#include <gtest/gtest.h>

#include <cmath>

#include "kernels/reference/int8_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;   // NOLINT
using namespace int8_test;  // NOLINT

TEST(Int8KernelTest, ConvSumsCenteredValuesPerChannel) {
  // x - 1 = [[0, 1, 2], [3, 4, 5], [6, 7, 8]].
  const Tensor x({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  // Map 0: [[1, 0], [0, -2]], zero point 0; map 1: all 2, zero point 1.
  const Tensor w({2, 1, 2, 2}, {1, 0, 0, -2, 2, 2, 2, 2});
  const Tensor b({2}, {1, -3});
  // Map 0 sums x[i][j] - 2 x[i+1][j+1]: -8, -9, -11, -12, times 0.5 * 0.25
  // plus 1; map 1 sums each 2x2 window: 8, 12, 20, 24, times 0.5 * 2 less 3.
  auto y = RunInt8("Conv", x, Params({0.5f}, {1}), w,
                   Params({0.25f, 2.f}, {0, 1}, 0), &b);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape, (Shape{1, 2, 2, 2}));
  EXPECT_EQ(y->data, (Floats{0, -0.125f, -0.375f, -0.5f, 5, 9, 17, 21}));
}

TEST(Int8KernelTest, ConvPaddingIsTheZeroPoint) {
  // x - 10 = [0, 10, 20, 30]; a 3x3 window of ones with pads 1 covers all
  // of it from every output: 60. Padding with q = 0 would add -10 per tap.
  const Tensor x({1, 1, 2, 2}, {10, 20, 30, 40});
  const Tensor w({1, 1, 3, 3}, Floats(9, 1.f));
  auto y = RunInt8("Conv", x, Params({1.f}, {10}), w, Params({1.f}, {0}),
                   nullptr, MakeAttrs({{"pads", Ints{1, 1, 1, 1}}}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->data, (Floats{60, 60, 60, 60}));
}

TEST(Int8KernelTest, GemmScalesEachOutputColumn) {
  // A + 128 = [[0, 1, 2], [28, 128, 155]]; B less its column zero points
  // (0, 3) = [[1, 1], [2, -1], [3, 0]]. Sums [[8, -1], [749, -100]],
  // scales 0.5 * (0.5, 4), C (1, 0.5).
  const Tensor a({2, 3}, {-128, -127, -126, -100, 0, 27});
  const Tensor bq({3, 2}, {1, 4, 2, 2, 3, 3});
  const Tensor c({2}, {1, 0.5f});
  const Floats want = {3, -1.5f, 188.25f, -199.5f};
  auto y = RunInt8("Gemm", a, Params({0.5f}, {-128}), bq,
                   Params({0.5f, 4.f}, {0, 3}, 1), &c);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->data, want);
  // The same B stored [N, K] (transB) is scaled along axis 0.
  const Tensor bt({2, 3}, {1, 2, 3, 4, 2, 3});
  y = RunInt8("Gemm", a, Params({0.5f}, {-128}), bt,
              Params({0.5f, 4.f}, {0, 3}, 0), &c,
              MakeAttrs({{"transB", int64_t{1}}}));
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->data, want);
}

TEST(Int8KernelTest, MatMulBroadcastsTheWeightOverBatches) {
  // B + 1 = [[2, 1], [1, 2]]: rows [1, 2] -> [4, 5], [3, 4] -> [10, 11].
  const Tensor a({2, 1, 2}, {1, 2, 3, 4});
  const Tensor bq({2, 2}, {1, 0, 0, 1});
  auto y = RunInt8("MatMul", a, Params({1.f}, {0}), bq, Params({0.5f}, {-1}),
                   nullptr);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_EQ(y->shape, (Shape{2, 1, 2}));
  EXPECT_EQ(y->data, (Floats{2, 2.5f, 5, 5.5f}));
}

TEST(Int8KernelTest, ErrorsNameTheNodeAndTheValue) {
  const Tensor w({1, 1, 1, 1}, {1});
  const Tensor x({1, 1, 1, 2}, {3, 2.5f});
  auto y =
      RunInt8("Conv", x, Params({1.f}, {0}), w, Params({1.f}, {0}), nullptr);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("'int8_Conv'"), std::string::npos);
  EXPECT_NE(y.status().message().find("element 1 is 2.5"), std::string::npos)
      << y.status().ToString();
  // A weight scaled along its input channels is not a per-channel weight.
  const Tensor w2({1, 2, 1, 1}, {1, 1});
  const Tensor x2({1, 2, 1, 1}, {1, 1});
  y = RunInt8("Conv", x2, Params({1.f}, {0}), w2, Params({1.f, 1.f}, {0, 0}, 1),
              nullptr);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("axis 1"), std::string::npos);
  // 40000 products of 255 * -255 leave int32.
  const Tensor a({1, 40000}, Floats(40000, 127.f));
  const Tensor b({40000, 1}, Floats(40000, -128.f));
  y = RunInt8("Gemm", a, Params({1.f}, {-128}), b, Params({1.f}, {127}),
              nullptr);
  ASSERT_FALSE(y.ok());
  EXPECT_NE(y.status().message().find("overflows int32"), std::string::npos);
}

struct Case {
  std::string op;
  Shape x, w;
  bool bias;
  Attrs attrs;
  int64_t w_axis;  // -1: per tensor
};

Tensor Dequantized(const Tensor& q, const QuantParams& p) {
  Tensor y(q.shape);
  ApplyQuant(p, q.shape, /*quantize=*/false, q.data.data(), y.data.data());
  return y;
}

Tensor Abs(Tensor t) {
  for (float& v : t.data) v = std::fabs(v);
  return t;
}

// Random int8 values, zero points and scales: the int8 kernel against the
// f32 kernel on the dequantized operands. The f32 path rounds each
// dequantized value to f32 (2^-24 relative), so each of its products is off
// by < 2^-23 relative (summed in double, exactly enough); the int8 path
// rounds only its scale s_x * s_w (2^-24 of the sum); each rounds its result
// once. So they differ by < 2^-22 (sum |x w| + |y|) per element, with sum
// |x w| (the bias's magnitude included) from the f32 kernel on magnitudes.
TEST(Int8KernelTest, EqualsTheF32EvaluationOfTheQdqLayer) {
  const std::vector<Case> cases = {
      {"Conv",
       {2, 6, 7, 7},
       {9, 2, 3, 3},
       true,
       MakeAttrs({{"group", int64_t{3}},
                  {"strides", Ints{2, 2}},
                  {"pads", Ints{1, 1, 1, 1}}}),
       0},
      {"Conv",
       {1, 3, 12},
       {4, 3, 3},
       false,
       MakeAttrs({{"dilations", Ints{2}}, {"pads", Ints{2, 1}}}),
       -1},
      {"Conv", {1, 4, 5, 5}, {8, 4, 1, 1}, true, {}, 0},
      {"Gemm",
       {7, 5},
       {6, 7},
       true,
       MakeAttrs({{"transA", int64_t{1}}, {"transB", int64_t{1}}}),
       0},
      {"Gemm", {3, 40}, {40, 10}, true, {}, 1},
      {"MatMul", {2, 3, 4, 5}, {5, 6}, false, {}, 1},
      {"MatMul", {4, 5}, {3, 5, 6}, false, {}, 2},
      {"MatMul", {5}, {5, 6}, false, {}, -1},
  };
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> scale(0.001f, 0.1f);
  std::uniform_int_distribution<int> zero(kInt8Min, kInt8Max);
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    SCOPED_TRACE("case " + std::to_string(ci) + " " + c.op);
    const Tensor xq = RandomInt8(c.x, 100 + ci);
    const Tensor wq = RandomInt8(c.w, 200 + ci);
    const QuantParams xp = Params({scale(rng)}, {zero(rng)});
    QuantParams wp = Params({scale(rng)}, {zero(rng)});
    if (c.w_axis >= 0) {
      wp.scale.clear();
      wp.zero_point.clear();
      for (int64_t k = 0; k < c.w[c.w_axis]; ++k) {
        wp.scale.push_back(scale(rng));
        wp.zero_point.push_back(zero(rng));
      }
      wp.axis = c.w_axis;
    }
    // Biases are given where the weight is per channel: along that axis.
    const Shape b_shape = {c.bias ? c.w[c.w_axis] : 1};
    const Tensor bias = Random(b_shape, 300 + ci, -2.f, 2.f);
    auto y = RunInt8(c.op, xq, xp, wq, wp, c.bias ? &bias : nullptr, c.attrs);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    const Tensor x = Dequantized(xq, xp), w = Dequantized(wq, wp);
    const Tensor ax = Abs(x), aw = Abs(w), ab = Abs(bias);
    std::vector<const Tensor*> f32_in = {&x, &w}, mag_in = {&ax, &aw};
    if (c.bias) {
      f32_in.push_back(&bias);
      mag_in.push_back(&ab);
    }
    const Tensor f32 = RunOne(c.op, f32_in, c.attrs);
    const Tensor mag = RunOne(c.op, mag_in, c.attrs);
    ASSERT_EQ(y->shape, f32.shape);
    for (int64_t i = 0; i < f32.size(); ++i) {
      const double tol =
          std::ldexp(1.0, -22) * (mag.data[i] + std::fabs(f32.data[i]));
      EXPECT_NEAR(y->data[i], f32.data[i], tol) << "element " << i;
    }
  }
}

}  // namespace
}  // namespace shoal
