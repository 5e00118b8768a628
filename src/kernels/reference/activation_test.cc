#include <gtest/gtest.h>

#include <cmath>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefActivationTest, ReluAndLeakyRelu) {
  const Tensor x({4}, {-2, -0.5f, 0, 3});
  EXPECT_TRUE(Near(RunOne("Relu", {&x}), {4}, {0, 0, 0, 3}));
  EXPECT_TRUE(Near(RunOne("LeakyRelu", {&x}), {4}, {-0.02f, -0.005f, 0, 3}));
  EXPECT_TRUE(Near(RunOne("LeakyRelu", {&x}, MakeAttrs({{"alpha", 0.5f}})), {4},
                   {-1, -0.25f, 0, 3}));
}

TEST(RefActivationTest, ClipBoundsAreOptional) {
  const Tensor x({4}, {-7, -1, 2, 9});
  EXPECT_TRUE(
      Near(RunOne("Clip", {&x}, MakeAttrs({{"min", 0.f}, {"max", 6.f}})), {4},
           {0, 0, 2, 6}));
  EXPECT_TRUE(Near(RunOne("Clip", {&x}, MakeAttrs({{"min", -2.f}})), {4},
                   {-2, -1, 2, 9}));
  EXPECT_TRUE(Near(RunOne("Clip", {&x}, MakeAttrs({{"max", 1.f}})), {4},
                   {-7, -1, 1, 1}));
  EXPECT_TRUE(Near(RunOne("Clip", {&x}), {4}, {-7, -1, 2, 9}));
}

TEST(RefActivationTest, SigmoidAndHardSwish) {
  const Tensor x({5}, {-4, -3, 0, 1, 3});
  EXPECT_TRUE(Near(RunOne("Sigmoid", {&x}), {5},
                   {static_cast<float>(1 / (1 + std::exp(4.0))),
                    static_cast<float>(1 / (1 + std::exp(3.0))), 0.5f,
                    static_cast<float>(1 / (1 + std::exp(-1.0))),
                    static_cast<float>(1 / (1 + std::exp(-3.0)))}));
  // x * clamp(x / 6 + 1/2, 0, 1).
  EXPECT_TRUE(Near(RunOne("HardSwish", {&x}), {5}, {0, 0, 0, 2.f / 3, 3}));
}

TEST(RefActivationTest, IdentityAndDropoutCopy) {
  const Tensor x = Random({2, 3}, 7);
  EXPECT_TRUE(Near(RunOne("Identity", {&x}), x.shape, x.data, 0));
  EXPECT_TRUE(Near(RunOne("Dropout", {&x}, MakeAttrs({{"ratio", 0.5f}})),
                   x.shape, x.data, 0));
}

TEST(RefActivationTest, SoftmaxKnownValues) {
  const Tensor x({1, 2}, {0, std::log(2.f)});
  EXPECT_TRUE(Near(RunOne("Softmax", {&x}), {1, 2}, {1.f / 3, 2.f / 3}));
}

TEST(RefActivationTest, SoftmaxSumsToOneAlongAxis) {
  const Tensor x = Random({2, 3, 4}, 11, -5, 5);
  for (int64_t axis : {0, 1, 2, -1}) {
    const Tensor y = RunOne("Softmax", {&x}, MakeAttrs({{"axis", axis}}));
    const int64_t a = axis < 0 ? 2 : axis;
    const int64_t inner = a == 0 ? 12 : a == 1 ? 4 : 1;
    for (int64_t i = 0; i < 24; ++i) {
      if ((i / inner) % x.shape[a] != 0) continue;  // first along the axis
      double sum = 0;
      for (int64_t j = 0; j < x.shape[a]; ++j) sum += y.data[i + j * inner];
      EXPECT_NEAR(sum, 1.0, 1e-6) << "axis " << axis << " at " << i;
    }
  }
}

TEST(RefActivationTest, SoftmaxIsStableForLargeInputs) {
  const Tensor x({3}, {1000, 1000, 1000 - std::log(2.f)});
  EXPECT_TRUE(Near(RunOne("Softmax", {&x}), {3}, {0.4f, 0.4f, 0.2f}, 1e-5f));
}

}  // namespace
}  // namespace shoal
