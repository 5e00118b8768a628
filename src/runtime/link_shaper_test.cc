#include "runtime/link_shaper.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

std::string MediumFile(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "-" + std::to_string(getpid());
}

double Seconds(Clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// Two mappings of one file, as two workers of `cluster up` have: what one
// holds of the channel, the other waits behind.
TEST(SharedMedium, TwoMappingsShareOneChannel) {
  const std::string path = MediumFile("medium-share");
  std::filesystem::remove(path);
  auto a = SharedMedium::Open(path, Medium{true, 8e6});
  auto b = SharedMedium::Open(path, Medium{true, 8e6});
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  const auto t0 = Clock::now() + std::chrono::seconds(10);
  EXPECT_NEAR(Seconds((*a)->Hold(t0, 0.1) - t0), 0.1, 1e-6);
  EXPECT_NEAR(Seconds((*b)->Hold(t0, 0.1) - t0), 0.2, 1e-6)
      << "the second device waits for the first's airtime";
  // Later than the channel is taken: it starts when asked.
  const auto t1 = t0 + std::chrono::seconds(1);
  EXPECT_NEAR(Seconds((*a)->Hold(t1, 0.05) - t1), 0.05, 1e-6);
  std::filesystem::remove(path);
}

// An emulated board's message takes the link from when its task finished in
// board time: one the host got to late (here by a second) is through at that
// time plus its bytes and latency, which has passed, and is not waited for.
TEST(LinkShaper, AMessageFromAnEarlierBoardTimeIsThroughFromThen) {
  LinkShaper link(Link{8e6, 0.009});  // 1 MB/s and 9 ms
  const auto earliest = Clock::now() - std::chrono::seconds(1);
  const auto t0 = Clock::now();
  const auto through = link.Transmit(10000, earliest);
  EXPECT_NEAR(Seconds(through - earliest), 0.010 + 0.009, 1e-6);
  EXPECT_LT(Seconds(Clock::now() - t0), 0.5) << "it waited for its past";
  // The next message queues behind the first's bytes, not behind now.
  const auto next = link.Transmit(10000, earliest);
  EXPECT_NEAR(Seconds(next - earliest), 0.020 + 0.009, 1e-6);
}

// 50 kB at 8 Mbit/s is 50 ms on a device's own link and, up to the access
// point and down, 100 ms of the channel: the longer is what it takes.
TEST(SharedMedium, AMessageTakesTheLongerOfLinkAndChannel) {
  const std::string path = MediumFile("medium-transmit");
  std::filesystem::remove(path);
  auto m = SharedMedium::Open(path, Medium{true, 8e6});
  ASSERT_TRUE(m.ok()) << m.status().message();
  LinkShaper link(Link{8e6, 0}, *m);
  EXPECT_TRUE(link.active());
  const auto t0 = Clock::now();
  link.Transmit(50000);
  link.Transmit(50000);
  EXPECT_GE(Seconds(Clock::now() - t0), 0.2);
  std::filesystem::remove(path);
}

// A file whose clock lies far ahead (damaged, or written by something
// else) does not make every sender sleep on it.
TEST(SharedMedium, AClockFarAheadIsNotWaitedFor) {
  const std::string path = MediumFile("medium-ahead");
  {
    const int64_t far =
        (Clock::now() + std::chrono::hours(1000)).time_since_epoch().count();
    std::ofstream f(path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(&far), sizeof(far));
  }
  auto m = SharedMedium::Open(path, Medium{true, 8e6});
  ASSERT_TRUE(m.ok()) << m.status().message();
  const auto t0 = Clock::now();
  EXPECT_NEAR(Seconds((*m)->Hold(t0, 0.1) - t0), 0.1, 1e-6);
  std::filesystem::remove(path);
}

TEST(SharedMedium, RefusesWhatItCannotUse) {
  auto none = SharedMedium::Open(MediumFile("medium-none"), Medium{});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("positive bandwidth"),
            std::string::npos);
  auto missing =
      SharedMedium::Open("/nonexistent-dir/medium", Medium{true, 1e6});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent-dir/medium"),
            std::string::npos)
      << missing.status().message();
}

}  // namespace
}  // namespace shoal
