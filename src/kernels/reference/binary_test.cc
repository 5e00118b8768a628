#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefBinaryTest, SameShape) {
  const Tensor a({3}, {1, 2, 3}), b({3}, {4, 5, 8});
  EXPECT_TRUE(Near(RunOne("Add", {&a, &b}), {3}, {5, 7, 11}));
  EXPECT_TRUE(Near(RunOne("Sub", {&a, &b}), {3}, {-3, -3, -5}));
  EXPECT_TRUE(Near(RunOne("Mul", {&a, &b}), {3}, {4, 10, 24}));
  EXPECT_TRUE(Near(RunOne("Div", {&a, &b}), {3}, {0.25f, 0.4f, 0.375f}));
}

TEST(RefBinaryTest, BroadcastTrailingAxis) {
  const Tensor a = Iota({2, 3}), b({3}, {10, 20, 30});
  EXPECT_TRUE(Near(RunOne("Add", {&a, &b}), {2, 3}, {10, 21, 32, 13, 24, 35}));
  // Operand order matters for Sub and Div.
  EXPECT_TRUE(Near(RunOne("Sub", {&b, &a}), {2, 3}, {10, 19, 28, 7, 16, 25}));
}

TEST(RefBinaryTest, BroadcastBothOperands) {
  const Tensor a({2, 1}, {1, 2}), b({1, 3}, {10, 20, 30});
  EXPECT_TRUE(Near(RunOne("Mul", {&a, &b}), {2, 3}, {10, 20, 30, 20, 40, 60}));
}

TEST(RefBinaryTest, BroadcastPerChannelAndScalar) {
  const Tensor x = Iota({1, 2, 1, 2}), per_channel({2, 1, 1}, {1, 10});
  EXPECT_TRUE(Near(RunOne("Div", {&x, &per_channel}), {1, 2, 1, 2},
                   {0, 1, 0.2f, 0.3f}));
  const Tensor scalar({}, {2});
  EXPECT_TRUE(Near(RunOne("Sub", {&scalar, &x}), {1, 2, 1, 2}, {2, 1, 0, -1}));
}

}  // namespace
}  // namespace shoal
