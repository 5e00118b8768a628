// DiffTensors: the relative measure of the exactness checks, and the cases
// that must never pass a tolerance (wrong shape, NaN).
#include "graph/tensor_diff.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace shoal {
namespace {

TEST(TensorDiff, RelativeToTheLargestReferenceValue) {
  const Tensor want({1, 3}, {1.f, -4.f, 2.f});
  const Tensor got({1, 3}, {1.f, -4.f, 2.002f});
  const TensorDiff d = DiffTensors(got, want);
  EXPECT_NEAR(d.max_abs, 0.002, 1e-6);
  EXPECT_NEAR(d.max_rel, 0.0005, 1e-6);  // 0.002 / 4
  EXPECT_EQ(MaxRelDiff(want, want), 0.0);
}

TEST(TensorDiff, AllZeroReferenceFallsBackToAbsolute) {
  const Tensor want({2}, {0.f, 0.f});
  const Tensor got({2}, {0.f, 3e-5f});
  EXPECT_NEAR(MaxRelDiff(got, want), 3e-5, 1e-9);
}

TEST(TensorDiff, WrongShapeAndNanNeverPass) {
  const Tensor want({1, 2}, {1.f, 2.f});
  EXPECT_TRUE(std::isinf(MaxRelDiff(Tensor({2, 1}, {1.f, 2.f}), want)));
  EXPECT_TRUE(std::isinf(MaxRelDiff(Tensor({1, 3}, {1.f, 2.f, 3.f}), want)));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorDiff d = DiffTensors(Tensor({1, 2}, {nan, 2.f}), want);
  EXPECT_TRUE(std::isinf(d.max_abs));
  EXPECT_TRUE(std::isinf(d.max_rel));
}

}  // namespace
}  // namespace shoal
