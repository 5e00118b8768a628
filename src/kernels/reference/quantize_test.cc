// QuantizeLinear / DequantizeLinear reference kernels on hand-computed
// values: ties round to even, results saturate to int8, per-axis parameters
// follow their slice. (oracle_test.cc checks random cases against numpy.)
#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefQuantizeTest, RoundsHalfToEvenAndSaturates) {
  // x / 0.5: 0.5, 1.5, 2.5, -0.5, -1.5, 3.2, 300, -300.
  Tensor x({8}, {0.25f, 0.75f, 1.25f, -0.25f, -0.75f, 1.6f, 150.f, -150.f});
  Tensor q =
      RunOne("QuantizeLinear", {&x},
             MakeAttrs({{"scale", Floats{0.5f}}, {"zero_point", Ints{0}}}));
  EXPECT_EQ(q.data, (Floats{0, 2, 2, -0, -2, 3, 127, -128}));
  // The zero point is added after rounding, before saturating.
  Tensor q1 =
      RunOne("QuantizeLinear", {&x},
             MakeAttrs({{"scale", Floats{0.5f}}, {"zero_point", Ints{1}}}));
  EXPECT_EQ(q1.data, (Floats{1, 3, 3, 1, -1, 4, 127, -128}));
}

TEST(RefQuantizeTest, DequantizesAroundTheZeroPoint) {
  Tensor q({4}, {-128, -3, 0, 127});
  Tensor y =
      RunOne("DequantizeLinear", {&q},
             MakeAttrs({{"scale", Floats{0.25f}}, {"zero_point", Ints{-3}}}));
  EXPECT_EQ(y.data, (Floats{-31.25f, 0.f, 0.75f, 32.5f}));
}

TEST(RefQuantizeTest, PerAxis) {
  // [2, 3]: axis 0 has two slices, axis 1 three.
  Tensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor rows = RunOne("QuantizeLinear", {&x},
                       MakeAttrs({{"scale", Floats{1.f, 0.5f}},
                                  {"zero_point", Ints{0, 1}},
                                  {"axis", int64_t{0}}}));
  EXPECT_EQ(rows.data, (Floats{1, 2, 3, 9, 11, 13}));
  Tensor cols = RunOne("DequantizeLinear", {&x},
                       MakeAttrs({{"scale", Floats{1.f, 2.f, 4.f}},
                                  {"zero_point", Ints{0, 1, 2}},
                                  {"axis", int64_t{-1}}}));
  EXPECT_EQ(cols.data, (Floats{1, 2, 4, 4, 8, 16}));
}

TEST(RefQuantizeTest, RoundTripIsWithinHalfAStep) {
  Tensor x = Random({3, 7, 5}, 11, -2.f, 2.f);
  const Attrs a =
      MakeAttrs({{"scale", Floats{2.f / 127}}, {"zero_point", Ints{0}}});
  Tensor q = RunOne("QuantizeLinear", {&x}, a);
  Tensor y = RunOne("DequantizeLinear", {&q}, a);
  for (int64_t i = 0; i < x.size(); ++i)
    EXPECT_LE(std::fabs(y.data[i] - x.data[i]), 1.f / 127 * 1.0001f) << i;
}

}  // namespace
}  // namespace shoal
