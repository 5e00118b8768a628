// `shoal cluster up` with `network: {medium: shared}` in transport mode:
// every worker is told the channel's file and rate, a plan still gives the
// one-device output, and the workers' sends moved the channel's clock (so
// they took the shared channel, not only their own links).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "emulate/emulated_cluster.h"
#include "runtime/process_test_util.h"
#include "util/net_address.h"

namespace shoal {
namespace {

using testing::ReadFile;
using testing::Shell;
using testing::ShoalBinary;

TEST(MediumCluster, WorkersShareTheChannelOfTheClusterFile) {
  const std::string dir =
      ::testing::TempDir() + "/medium-cluster-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = dir + "/cluster.yaml";
  {
    std::ofstream f(file);
    f << "network: {medium: shared, bandwidth: 40Mbit}\ndevices:\n";
    for (int i = 0; i < 2; ++i) {
      auto port = FreeLoopbackPort();
      ASSERT_TRUE(port.ok()) << port.status().message();
      f << "  - {name: d" << i << ", address: 127.0.0.1:" << *port
        << ", link: {bandwidth: 1Gbit, latency: 1ms}}\n";
    }
  }
  const std::string shoal = ShoalBinary();
  std::string out;
  ASSERT_EQ(Shell(shoal + " cluster up " + file, &out), 0) << out;
  EXPECT_NE(out.find("shared medium: one channel of 40 Mbit/s"),
            std::string::npos)
      << out;
  const std::string state = ClusterStateDir(file);
  EXPECT_NE(ReadFile(state + "/d1.log").find("on a shared medium of 40 Mbit/s"),
            std::string::npos)
      << ReadFile(state + "/d1.log");
  const std::string plan = dir + "/plan.json";
  EXPECT_EQ(Shell(shoal + " plan lenet5 --cluster " + file +
                      " --strategy lop -o " + plan,
                  &out),
            0)
      << out;
  const auto before = std::chrono::steady_clock::now();
  EXPECT_EQ(
      Shell(shoal + " run --plan " + plan + " --cluster " + file + " --check",
            &out),
      0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  // The channel's clock: until when it was last taken, on the steady clock
  // every process shares. The run's messages took it after `before`.
  int64_t clock = 0;
  std::ifstream(state + "/medium", std::ios::binary)
      .read(reinterpret_cast<char*>(&clock), sizeof(clock));
  EXPECT_GT(clock, before.time_since_epoch().count())
      << "no message of the run took the shared channel";
  EXPECT_EQ(Shell(shoal + " cluster down --purge " + file, &out), 0) << out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace shoal
