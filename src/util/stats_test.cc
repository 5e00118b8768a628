#include "util/stats.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(Stats, MedianOfOddAndEvenCounts) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3}), 3);
  EXPECT_EQ(Median({5, 1, 3}), 3);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);  // the mean of the middle two
}

TEST(Stats, QuantileInterpolatesBetweenOrderStatistics) {
  EXPECT_EQ(Quantile({}, 0.25), 0);
  EXPECT_EQ(Quantile({7}, 0.25), 7);
  const std::vector<double> v = {40, 10, 30, 20, 50};
  EXPECT_EQ(Quantile(v, 0), 10);
  EXPECT_EQ(Quantile(v, 1), 50);
  EXPECT_EQ(Quantile(v, 0.25), 20);
  EXPECT_EQ(Quantile(v, 0.5), 30);
  EXPECT_DOUBLE_EQ(Quantile(v, 0.1), 14);  // 0.4 of the way from 10 to 20
  EXPECT_EQ(Quantile({1, 3}, 0.25), 1.5);
}

}  // namespace
}  // namespace shoal
