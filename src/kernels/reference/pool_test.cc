#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefPoolTest, MaxPoolFloorAndCeilMode) {
  const Tensor x = Iota({1, 1, 4, 4});
  Attrs a = MakeAttrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  EXPECT_TRUE(Near(RunOne("MaxPool", {&x}, a), {1, 1, 1, 1}, {10}));
  // ceil_mode adds windows starting at row/col 2 that run off the end.
  a.Set("ceil_mode", int64_t{1});
  EXPECT_TRUE(Near(RunOne("MaxPool", {&x}, a), {1, 1, 2, 2}, {10, 11, 14, 15}));
}

TEST(RefPoolTest, MaxPoolPaddingNeverWins) {
  const Tensor x({1, 1, 3}, {-5, -6, -7});
  const Attrs a = MakeAttrs({{"kernel_shape", Ints{2}}, {"pads", Ints{1, 1}}});
  EXPECT_TRUE(Near(RunOne("MaxPool", {&x}, a), {1, 1, 4}, {-5, -5, -6, -7}));
}

TEST(RefPoolTest, MaxPoolDilation) {
  const Tensor x({1, 1, 5}, {1, 9, 2, 8, 3});
  const Attrs a =
      MakeAttrs({{"kernel_shape", Ints{2}}, {"dilations", Ints{2}}});
  // max(x[i], x[i + 2]).
  EXPECT_TRUE(Near(RunOne("MaxPool", {&x}, a), {1, 1, 3}, {2, 9, 3}));
}

TEST(RefPoolTest, AveragePoolCeilMode) {
  const Tensor x = Iota({1, 1, 4, 4});
  const Attrs a = MakeAttrs({{"kernel_shape", Ints{3, 3}},
                             {"strides", Ints{2, 2}},
                             {"ceil_mode", int64_t{1}}});
  // Clipped windows divide by the elements they cover: (2+3+6+7+10+11)/6.
  EXPECT_TRUE(
      Near(RunOne("AveragePool", {&x}, a), {1, 1, 2, 2}, {5, 6.5f, 11, 12.5f}));
}

TEST(RefPoolTest, AveragePoolCountIncludePad) {
  const Tensor x({1, 1, 4}, {1, 2, 3, 4});
  Attrs a = MakeAttrs({{"kernel_shape", Ints{3}}, {"pads", Ints{1, 1}}});
  EXPECT_TRUE(
      Near(RunOne("AveragePool", {&x}, a), {1, 1, 4}, {1.5f, 2, 3, 3.5f}));
  a.Set("count_include_pad", int64_t{1});
  EXPECT_TRUE(
      Near(RunOne("AveragePool", {&x}, a), {1, 1, 4}, {1, 2, 3, 7.f / 3}));
}

TEST(RefPoolTest, AveragePoolCeilModeCountsPadButNotOverhang) {
  const Tensor x({1, 1, 6}, {1, 2, 3, 4, 5, 6});
  // No padding: the last ceil window covers x[4], x[5] and one overhang.
  Attrs a = MakeAttrs({{"kernel_shape", Ints{3}},
                       {"strides", Ints{2}},
                       {"ceil_mode", int64_t{1}},
                       {"count_include_pad", int64_t{1}}});
  EXPECT_TRUE(Near(RunOne("AveragePool", {&x}, a), {1, 1, 3}, {2, 4, 5.5f}));
  // With one end pad, that position is padding and is counted.
  a.Set("pads", Ints{0, 1});
  EXPECT_TRUE(
      Near(RunOne("AveragePool", {&x}, a), {1, 1, 3}, {2, 4, 11.f / 3}));
}

TEST(RefPoolTest, Pool3D) {
  const Tensor x = Iota({1, 1, 2, 2, 2});
  const Attrs a = MakeAttrs({{"kernel_shape", Ints{2, 2, 2}}});
  EXPECT_TRUE(Near(RunOne("MaxPool", {&x}, a), {1, 1, 1, 1, 1}, {7}));
  EXPECT_TRUE(Near(RunOne("AveragePool", {&x}, a), {1, 1, 1, 1, 1}, {3.5f}));
}

TEST(RefPoolTest, PoolSameUpper) {
  const Tensor x({1, 1, 3}, {1, 2, 3});
  const Attrs a = MakeAttrs(
      {{"kernel_shape", Ints{2}}, {"auto_pad", std::string("SAME_UPPER")}});
  EXPECT_TRUE(Near(RunOne("AveragePool", {&x}, a), {1, 1, 3}, {1.5f, 2.5f, 3}));
}

TEST(RefPoolTest, GlobalPools) {
  const Tensor x({1, 2, 2, 2}, {1, 2, 3, 6, -1, -2, -3, -4});
  EXPECT_TRUE(
      Near(RunOne("GlobalAveragePool", {&x}), {1, 2, 1, 1}, {3, -2.5f}));
  EXPECT_TRUE(Near(RunOne("GlobalMaxPool", {&x}), {1, 2, 1, 1}, {6, -1}));
  const Tensor x1({2, 1, 3}, {1, 2, 6, 0, 0, 3});
  EXPECT_TRUE(Near(RunOne("GlobalAveragePool", {&x1}), {2, 1, 1}, {3, 1}));
}

}  // namespace
}  // namespace shoal
