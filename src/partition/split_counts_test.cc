#include "partition/split_counts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <random>

namespace shoal {
namespace {

using Counts = std::vector<int64_t>;

TEST(SplitCountsTest, EqualShares) {
  EXPECT_EQ(*SplitCounts(8, EqualShares(2)), (Counts{4, 4}));
  EXPECT_EQ(*SplitCounts(10, EqualShares(4)), (Counts{3, 3, 2, 2}));
  EXPECT_EQ(*SplitCounts(1024, EqualShares(6)),
            (Counts{171, 171, 171, 171, 170, 170}));
  EXPECT_EQ(*SplitCounts(5, EqualShares(5)), (Counts{1, 1, 1, 1, 1}));
}

TEST(SplitCountsTest, UnequalShares) {
  EXPECT_EQ(*SplitCounts(8, {0.75, 0.25}), (Counts{6, 2}));
  EXPECT_EQ(*SplitCounts(4, {0.75, 0.25}), (Counts{3, 1}));
  // 10 * {0.5, 0.3, 0.2} is exact.
  EXPECT_EQ(*SplitCounts(10, {0.5, 0.3, 0.2}), (Counts{5, 3, 2}));
  // 7 * {0.45, 0.35, 0.2} = 3.15, 2.45, 1.4: floors 3, 2, 1 and the one left
  // goes to the largest remainder (0.45).
  EXPECT_EQ(*SplitCounts(7, {0.45, 0.35, 0.2}), (Counts{3, 3, 1}));
}

TEST(SplitCountsTest, TinyShareStillGetsOne) {
  // 4 * 0.001 rounds to 0 twice; both units come from the only part that
  // has one to spare.
  EXPECT_EQ(*SplitCounts(4, {0.998, 0.001, 0.001}), (Counts{2, 1, 1}));
}

TEST(SplitCountsTest, RandomSharesSumProportionAndMinimum) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int n = 1 + rng() % 9;
    std::vector<double> shares(n);
    double sum = 0;
    for (double& s : shares) sum += s = 0.2 + (rng() % 1000) / 250.0;
    for (double& s : shares) s /= sum;
    const int64_t total = n + rng() % 3000;
    auto parts = SplitCounts(total, shares);
    ASSERT_TRUE(parts.ok()) << parts.status().ToString();
    ASSERT_EQ(parts->size(), static_cast<size_t>(n));
    EXPECT_EQ(std::accumulate(parts->begin(), parts->end(), int64_t{0}), total);
    for (int d = 0; d < n; ++d) {
      EXPECT_GE((*parts)[d], 1);
      // Largest remainder is within 1 of the ideal; lifting tiny parts to 1
      // moves a unit at most n times.
      EXPECT_LT(std::abs((*parts)[d] - total * shares[d]), 1.0 + n);
      if (total * shares[d] >= n) {
        EXPECT_LT(std::abs((*parts)[d] - total * shares[d]), 1.0);
      }
    }
  }
}

TEST(SplitCountsTest, Errors) {
  auto few = SplitCounts(3, EqualShares(4));
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.status().message().find("cannot split 3 into 4"),
            std::string::npos);
  EXPECT_FALSE(SplitCounts(10, {}).ok());
  EXPECT_FALSE(SplitCounts(10, {0.5, 0.6}).ok());   // sums to 1.1
  EXPECT_FALSE(SplitCounts(10, {1.0, 0.0}).ok());   // a zero share
  EXPECT_FALSE(SplitCounts(10, {1.5, -0.5}).ok());  // a negative share
  EXPECT_FALSE(SplitCounts(10, {NAN, 1.0}).ok());
}

}  // namespace
}  // namespace shoal
