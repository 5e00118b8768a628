#include <gtest/gtest.h>

#include <cmath>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefNormalizationTest, BatchNormPerChannel) {
  const Tensor x({1, 2, 1, 2}, {1, 3, 10, 20});
  const Tensor scale({2}, {2, 1}), bias({2}, {1, -1});
  const Tensor mean({2}, {1, 10}), var({2}, {4, 0.25f});
  const Attrs a = MakeAttrs({{"epsilon", 0.f}});
  // c0: 2 (x - 1) / 2 + 1; c1: (x - 10) / 0.5 - 1.
  EXPECT_TRUE(
      Near(RunOne("BatchNormalization", {&x, &scale, &bias, &mean, &var}, a),
           {1, 2, 1, 2}, {1, 3, -1, 19}));
}

TEST(RefNormalizationTest, BatchNormDefaultEpsilon) {
  const Tensor x({1, 1, 1}, {1}), one({1}, {1}), zero({1}, {0});
  EXPECT_TRUE(
      Near(RunOne("BatchNormalization", {&x, &one, &zero, &zero, &zero}),
           {1, 1, 1}, {static_cast<float>(1 / std::sqrt(1e-5))}, 1e-5f));
}

TEST(RefNormalizationTest, LrnOddSizeByHand) {
  const Tensor x({1, 4, 1, 1}, {1, 2, 3, 4});
  // size 3: channels c-1..c+1; alpha/size = 1, bias 2, beta 0.5.
  const Attrs a = MakeAttrs(
      {{"size", int64_t{3}}, {"alpha", 3.f}, {"beta", 0.5f}, {"bias", 2.f}});
  EXPECT_TRUE(Near(RunOne("LRN", {&x}, a), {1, 4, 1, 1},
                   {static_cast<float>(1 / std::sqrt(7.0)), 0.5f,
                    static_cast<float>(3 / std::sqrt(31.0)),
                    static_cast<float>(4 / std::sqrt(27.0))}));
}

TEST(RefNormalizationTest, LrnEvenSizeLooksAhead) {
  const Tensor x({1, 4, 1, 1}, {1, 2, 3, 4});
  // size 2: ONNX sums channels c .. c+1 (floor before, ceil after).
  const Attrs a = MakeAttrs(
      {{"size", int64_t{2}}, {"alpha", 1.f}, {"beta", 1.f}, {"bias", 1.f}});
  EXPECT_TRUE(Near(RunOne("LRN", {&x}, a), {1, 4, 1, 1},
                   {1 / 3.5f, 2 / 7.5f, 3 / 13.5f, 4 / 9.f}));
}

TEST(RefNormalizationTest, LrnDefaultsAndSpatialIndependence) {
  const Tensor x({1, 2, 1, 2}, {1, 100, 2, 0});
  const Attrs a = MakeAttrs({{"size", int64_t{3}}});
  // alpha 1e-4, beta 0.75, bias 1; each pixel sees only its own channels.
  auto expect = [](double v, double sq) {
    return static_cast<float>(v / std::pow(1 + 1e-4 / 3 * sq, 0.75));
  };
  EXPECT_TRUE(
      Near(RunOne("LRN", {&x}, a), {1, 2, 1, 2},
           {expect(1, 5), expect(100, 10000), expect(2, 5), expect(0, 10000)}));
}

}  // namespace
}  // namespace shoal
