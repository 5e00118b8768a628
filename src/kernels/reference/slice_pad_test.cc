#include <gtest/gtest.h>

#include <limits>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

constexpr int64_t kBig = std::numeric_limits<int64_t>::max();

Tensor Slice(const Tensor& x, Ints starts, Ints ends, Ints axes = {},
             Ints steps = {}) {
  Attrs a = MakeAttrs({{"starts", starts}, {"ends", ends}});
  if (!axes.empty()) a.Set("axes", axes);
  if (!steps.empty()) a.Set("steps", steps);
  return RunOne("Slice", {&x}, a);
}

TEST(RefSliceTest, BasicAndClamped) {
  const Tensor x = Iota({10});
  EXPECT_TRUE(Near(Slice(x, {2}, {5}), {3}, {2, 3, 4}));
  EXPECT_TRUE(Near(Slice(x, {-3}, {kBig}), {3}, {7, 8, 9}));
  EXPECT_TRUE(Near(Slice(x, {1}, {9}, {0}, {3}), {3}, {1, 4, 7}));
}

TEST(RefSliceTest, NegativeStep) {
  const Tensor x = Iota({10});
  EXPECT_TRUE(Near(Slice(x, {-1}, {-kBig}, {0}, {-2}), {5}, {9, 7, 5, 3, 1}));
  EXPECT_TRUE(Near(Slice(x, {kBig}, {-kBig}, {0}, {-1}), {10},
                   {9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  EXPECT_TRUE(Near(Slice(x, {7}, {2}, {0}, {-3}), {2}, {7, 4}));
}

TEST(RefSliceTest, SeveralAxes) {
  const Tensor x = Iota({3, 4});
  // Rows 2, 1 (reversed), columns 1..2.
  EXPECT_TRUE(
      Near(Slice(x, {1, 2}, {3, 0}, {1, 0}, {1, -1}), {2, 2}, {9, 10, 5, 6}));
}

Tensor Pad(const Tensor& x, Ints pads, const std::string& mode,
           float value = 0.f) {
  return RunOne("Pad", {&x},
                MakeAttrs({{"pads", pads}, {"mode", mode}, {"value", value}}));
}

TEST(RefPadTest, ModesOnOneAxis) {
  const Tensor x({3}, {1, 2, 3});
  EXPECT_TRUE(Near(Pad(x, {2, 1}, "constant", 9), {6}, {9, 9, 1, 2, 3, 9}));
  EXPECT_TRUE(Near(Pad(x, {2, 2}, "reflect"), {7}, {3, 2, 1, 2, 3, 2, 1}));
  EXPECT_TRUE(Near(Pad(x, {2, 2}, "edge"), {7}, {1, 1, 1, 2, 3, 3, 3}));
}

TEST(RefPadTest, ReflectWiderThanAxisRepeats) {
  // numpy.pad([1, 2, 3], 4, 'reflect').
  const Tensor x({3}, {1, 2, 3});
  EXPECT_TRUE(
      Near(Pad(x, {4, 4}, "reflect"), {11}, {1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3}));
}

TEST(RefPadTest, TwoAxesAndCropping) {
  const Tensor x = Iota({2, 3});
  // pads [rows_begin, cols_begin, rows_end, cols_end]; negative crops.
  EXPECT_TRUE(
      Near(Pad(x, {1, -1, 0, 1}, "edge"), {3, 3}, {1, 2, 2, 1, 2, 2, 4, 5, 5}));
  EXPECT_TRUE(Near(Pad(x, {0, 1, 1, 0}, "reflect"), {3, 4},
                   {1, 0, 1, 2, 4, 3, 4, 5, 1, 0, 1, 2}));
}

}  // namespace
}  // namespace shoal
