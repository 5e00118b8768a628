#include "emulate/calibrate.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "cluster/board.h"
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

// Host cores a cluster of named boards needs in real time: each board's
// compute (its fastest arithmetic on this host's 3x3 conv rate, or its fc
// weights streamed at this host's fc rate) plus its messages (its memory
// rate at this host's copy rate); the dilation that leaves half the host
// for everything else, rounded up to a half.
TEST(CalibrateHost, BoardsNeedTheirComputeAndTheirMessages) {
  const BoardClass* pi3 = FindBoard("pi3b+");
  ASSERT_NE(pi3, nullptr);
  HostRate h;
  h.conv_macs_per_cpu_second = 100e9;
  h.gemm_macs_per_cpu_second = 1e15;  // fc streaming never the larger
  h.copy_bytes_per_cpu_second = 20e9;
  Cluster c;
  c.devices.resize(8);
  for (auto& d : c.devices) d.board = pi3;
  const BoardRates& r = pi3->rates;
  const double one = std::max({r.winograd_macs_per_s, r.gemm_macs_per_s,
                               r.depthwise_macs_per_s}) /
                         100e9 +
                     r.memory_bytes_per_s / 20e9;
  EXPECT_NEAR(BoardHostCores(c, h), 8 * one, 1e-12);
  // Without a copy rate (an old calibration file): compute alone.
  HostRate old = h;
  old.copy_bytes_per_cpu_second = 0;
  EXPECT_LT(BoardHostCores(c, old), BoardHostCores(c, h));
  // A board at half speed needs half as much.
  c.devices.resize(1);
  c.devices[0].board_speed = 0.5;
  EXPECT_NEAR(BoardHostCores(c, h), one / 2, 1e-12);
  // Devices without a board, or the LCP paper's Pi 3 (paced by a CPU
  // share, not a class's time), need none of it.
  c.devices[0].board = nullptr;
  EXPECT_EQ(BoardHostCores(c, h), 0);
  c.devices[0].board = FindBoard("pi3-lcp");
  ASSERT_NE(c.devices[0].board, nullptr);
  EXPECT_EQ(BoardHostCores(c, h), 0);

  EXPECT_EQ(DilationFor(0.9, 2), 1.0);
  EXPECT_EQ(DilationFor(1.0, 2), 1.0);
  EXPECT_EQ(DilationFor(1.2, 2), 1.5);
  EXPECT_EQ(DilationFor(1.94, 2), 2.0);
  EXPECT_EQ(DilationFor(2.37, 2), 2.5);
  EXPECT_EQ(DilationFor(2.37, 4), 1.5);
}

}  // namespace
}  // namespace shoal
