#include "cluster/cpu_quota.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(CpuQuota, WhatClusterUpApplies) {
  EXPECT_EQ(QuotaPeriodUs(0.06), 20000);
  EXPECT_EQ(QuotaUs(0.06), 1200);
  EXPECT_EQ(QuotaPeriodUs(0.02), 50000);  // 1 ms minimum quota
  EXPECT_EQ(QuotaUs(0.02), 1000);
  EXPECT_FALSE(QuotaForCpu(0).limited());
  EXPECT_NEAR(QuotaForCpu(0.18).fraction(), 0.18, 1e-9);
}

TEST(QuotaClock, ShortWorkRunsAtOnceLongWorkIsThrottled) {
  QuotaClock c(CpuQuota{0.001, 0.010}, 0.0);  // 1 ms per 10 ms
  EXPECT_NEAR(c.Run(0.0, 0.0005), 0.0005, 1e-12);
  // 0.5 ms left in period 0, then 1 ms per period: 2.5 ms more needs
  // periods 1 and 2 whole and half of period 3.
  EXPECT_NEAR(c.Run(0.001, 0.003), 0.0305, 1e-12);
  // A start after idle periods gets the whole quota again.
  EXPECT_NEAR(c.Run(0.1, 0.001), 0.101, 1e-12);
  // Long work: 1 s of CPU at 10 % is about 10 s.
  QuotaClock d(CpuQuota{0.001, 0.010}, 0.0043);
  const double end = d.Run(0.0, 1.0);
  EXPECT_GT(end, 9.98);
  EXPECT_LT(end, 10.0);
}

TEST(QuotaClock, UnlimitedIsPlainTime) {
  QuotaClock c;
  EXPECT_EQ(c.Run(2.0, 0.5), 2.5);
}

}  // namespace
}  // namespace shoal
