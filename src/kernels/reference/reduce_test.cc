#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefReduceTest, MeanOverOneAxis) {
  const Tensor x = Iota({2, 3});
  EXPECT_TRUE(
      Near(RunOne("ReduceMean", {&x},
                  MakeAttrs({{"axes", Ints{1}}, {"keepdims", int64_t{0}}})),
           {2}, {1, 4}));
  EXPECT_TRUE(Near(RunOne("ReduceMean", {&x}, MakeAttrs({{"axes", Ints{-2}}})),
                   {1, 3}, {1.5f, 2.5f, 3.5f}));
}

TEST(RefReduceTest, MeanOverSpatialAxes) {
  const Tensor x = Iota({1, 2, 2, 2});
  EXPECT_TRUE(
      Near(RunOne("ReduceMean", {&x}, MakeAttrs({{"axes", Ints{2, 3}}})),
           {1, 2, 1, 1}, {1.5f, 5.5f}));
}

TEST(RefReduceTest, MeanOverAllAxesByDefault) {
  const Tensor x = Iota({2, 2, 2});
  EXPECT_TRUE(Near(RunOne("ReduceMean", {&x}), {1, 1, 1}, {3.5f}));
  EXPECT_TRUE(
      Near(RunOne("ReduceMean", {&x}, MakeAttrs({{"keepdims", int64_t{0}}})),
           {}, {3.5f}));
}

}  // namespace
}  // namespace shoal
