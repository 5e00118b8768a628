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

}  // namespace
}  // namespace shoal
