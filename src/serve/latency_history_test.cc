#include "serve/latency_history.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

using Clock = LatencyHistory::Clock;

Clock::time_point At(double s) {
  return Clock::time_point(std::chrono::milliseconds(int64_t(s * 1000)));
}

TEST(LatencyHistory, OnePointPerSecond) {
  LatencyHistory h(10);
  for (int i = 1; i <= 100; ++i) h.Add(i, At(1000.5));
  h.Add(7, At(1001.2));
  // 1002 and 1003 are quiet; 1004 is still running.
  const auto p = h.Points(At(1004.1));
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p[0].unix_s, 1000);
  EXPECT_EQ(p[0].count, 100);
  // Interpolated between ranks (util/stats.h): 1..100 at 0.5 and 0.95.
  EXPECT_DOUBLE_EQ(p[0].p50_ms, 50.5);
  EXPECT_DOUBLE_EQ(p[0].p95_ms, 95.05);
  EXPECT_EQ(p[0].max_ms, 100);
  EXPECT_EQ(p[1].unix_s, 1001);
  EXPECT_EQ(p[1].count, 1);
  EXPECT_EQ(p[1].max_ms, 7);
  EXPECT_EQ(p[2].count, 0);
  EXPECT_EQ(p[3].unix_s, 1003);
}

TEST(LatencyHistory, KeepsTheLastSeconds) {
  LatencyHistory h(5);
  h.Add(1, At(100));
  // A long quiet spell: the points stay bounded.
  const auto p = h.Points(At(1e6));
  ASSERT_EQ(p.size(), 5u);
  EXPECT_EQ(p.back().unix_s, 1e6 - 1);
  EXPECT_EQ(p.front().count, 0);
}

}  // namespace
}  // namespace shoal
