#include "lcp/branch_width.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(BranchWidthTest, DividesRoundingDownAtLeastOne) {
  EXPECT_EQ(BranchWidth(64, 1, 0), 64);
  EXPECT_EQ(BranchWidth(64, 2, 0), 32);
  EXPECT_EQ(BranchWidth(6, 4, 0), 1);    // 1.5 -> 1 (LeNet-split4 16.1k)
  EXPECT_EQ(BranchWidth(84, 8, 0), 10);  // 10.5 -> 10 (LeNet-split8 8.8k)
  EXPECT_EQ(BranchWidth(6, 8, 0), 1);    // 0.75 -> clamped to 1
  EXPECT_EQ(BranchWidth(1, 64, 0), 1);
}

TEST(BranchWidthTest, FattensTheSplitWidth) {
  EXPECT_EQ(BranchWidth(64, 8, 40), 11);     // 8 * 1.4 = 11.2
  EXPECT_EQ(BranchWidth(80, 8, 10), 11);     // 10 * 1.1 = 11 exactly
  EXPECT_EQ(BranchWidth(4096, 8, 40), 716);  // 512 * 1.4 = 716.8
  EXPECT_EQ(BranchWidth(6, 8, 40), 1);       // 1 * 1.4 = 1.4
  EXPECT_EQ(BranchWidth(6, 8, 100), 2);
}

TEST(BranchWidthTest, EveryWidthAndCountStaysPositiveAndBounded) {
  for (int64_t w = 1; w <= 300; ++w)
    for (int64_t k = 1; k <= 16; ++k) {
      const int64_t b = BranchWidth(w, k, 0);
      EXPECT_GE(b, 1);
      EXPECT_LE(b * k, std::max(w, k));
    }
}

}  // namespace
}  // namespace shoal
