#include "profile/profiler.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

// A Pi 3 of mixed.yaml (1 ms of CPU per 23 ms) on a 62 Mbit/s, 9 ms link:
// 12 of its 31 small probes took the link's 9.8 ms, the rest waited for
// quota besides (12-14 ms, or a whole period more).
std::vector<double> ThrottledSmallProbes() {
  std::vector<double> v(12, 0.0098);
  for (int i = 0; i < 10; ++i) v.push_back(0.0125 + 0.0002 * i);
  for (int i = 0; i < 9; ++i) v.push_back(0.0230 + 0.0003 * i);
  return v;
}

TEST(LinkFromProbes, UnderAQuotaTheLowerQuartileIsTheLink) {
  const std::vector<double> small = ThrottledSmallProbes();
  const std::vector<double> large = {0.1460, 0.1458, 0.1680};
  const double cpu = 0.0015;  // both ends' CPU per message
  const Link l = LinkFromProbes(small, large, int64_t{1} << 20, cpu, true);
  // 1 MiB in (146.0 - 9.8) ms: 61.6 Mbit/s.
  EXPECT_NEAR(l.bandwidth_bps, 61.6e6, 0.2e6);
  // 9.8 ms less the CPU and 64 B at that rate: the 9 ms link and a little.
  EXPECT_NEAR(l.latency_s, 0.0098 - cpu - 512 / l.bandwidth_bps, 1e-9);
  EXPECT_LT(l.latency_s, 0.0085);
  // Taken as a link without a quota the waits count: the median is 12.7 ms.
  const Link m = LinkFromProbes(small, large, int64_t{1} << 20, cpu, false);
  EXPECT_GT(m.latency_s, 0.011);
}

TEST(LinkFromProbes, WithoutAQuotaTheMedianIsTheLink) {
  // A link whose latency jitters both ways: its middle, not its best.
  const std::vector<double> small = {0.0040, 0.0050, 0.0060, 0.0070, 0.0080};
  const std::vector<double> large = {0.0900, 0.0940, 0.0980};
  const Link l = LinkFromProbes(small, large, int64_t{1} << 20, 0.0005, false);
  EXPECT_NEAR(l.bandwidth_bps, 8.0 * ((1 << 20) - 64) / (0.094 - 0.006), 1);
  EXPECT_NEAR(l.latency_s, 0.006 - 0.0005 - 512 / l.bandwidth_bps, 1e-9);
  // An unshaped link (the large probe no slower): unlimited bandwidth, and
  // never a negative latency.
  const Link u =
      LinkFromProbes({0.0002}, {0.0002}, int64_t{1} << 20, 0.001, false);
  EXPECT_EQ(u.bandwidth_bps, 0);
  EXPECT_EQ(u.latency_s, 0);
}

}  // namespace
}  // namespace shoal
