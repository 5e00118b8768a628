#include "emulate/calibrate.h"

#include <gtest/gtest.h>

#include "sim/latency_model.h"

namespace shoal {
namespace {

TEST(CalibrateHost, MeasuresConvAndGemm) {
  auto r = CalibrateHost();
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Any CPU this runs on does more than a Pi 3 per core, and not a
  // thousand times more.
  EXPECT_GT(r->conv_macs_per_cpu_second, kPi3MacsPerSecond);
  EXPECT_LT(r->conv_macs_per_cpu_second, 1000 * kPi3MacsPerSecond);
  EXPECT_GT(r->gemm_macs_per_cpu_second, 0);
  // Copies: faster than a Pi 3, slower than a terabyte a second.
  EXPECT_GT(r->copy_bytes_per_cpu_second, kPi3CopyBytesPerSecond);
  EXPECT_LT(r->copy_bytes_per_cpu_second, 1e12);
  // The blend lies between its parts.
  EXPECT_LE(r->macs_per_cpu_second,
            std::max(r->conv_macs_per_cpu_second, r->gemm_macs_per_cpu_second));
  EXPECT_GE(r->macs_per_cpu_second,
            std::min(r->conv_macs_per_cpu_second, r->gemm_macs_per_cpu_second));
}

TEST(CalibrateHost, FractionScalesWithSpeed) {
  HostRate h;
  h.macs_per_cpu_second = 33e9;
  EXPECT_DOUBLE_EQ(CpuFractionForSpeed(1, h), kPi3MacsPerSecond / 33e9);
  EXPECT_DOUBLE_EQ(CpuFractionForSpeed(3, h), 3 * kPi3MacsPerSecond / 33e9);
}

TEST(CalibrateHost, SystemFractionFollowsCopiesWithinBounds) {
  HostRate h;
  h.macs_per_cpu_second = 100e9;
  h.copy_bytes_per_cpu_second = 20e9;
  // Copies: a Pi 3 is 1/20 of this host, though 1/60 on convolutions.
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(1, 1, h),
                   kPi3CopyBytesPerSecond / 20e9);
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(2, 1, h),
                   2 * kPi3CopyBytesPerSecond / 20e9);
  // A quad-core board: four times one core's.
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(1, 4, h),
                   4 * kPi3CopyBytesPerSecond / 20e9);
  // Never below the compute fraction, never above a core per device core.
  h.copy_bytes_per_cpu_second = 1000e9;
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(1, 1, h), CpuFractionForSpeed(1, h));
  h.copy_bytes_per_cpu_second = 2e9;
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(4, 1, h), 1.0);
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(4, 2, h), 2.0);
  // A calibration without a copy rate: the compute fraction.
  h.copy_bytes_per_cpu_second = 0;
  EXPECT_DOUBLE_EQ(SystemFractionForSpeed(1, 4, h), CpuFractionForSpeed(1, h));
}

}  // namespace
}  // namespace shoal
