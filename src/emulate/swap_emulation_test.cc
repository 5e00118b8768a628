// A board that swaps (pi3-collab, cluster/swap.h) is emulated as it is
// predicted: `cluster up` gives its worker --swap-as, which holds each
// request for the paging its deployment needs beyond the board's memory,
// and `simulate` prices the same seconds. With the board's full 1 GiB the
// model fits and neither adds anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "emulate/emulated_cluster.h"
#include "runtime/process_test_util.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

// Median latency (ms) that `simulate` predicts and `bench` measures for
// LeNet-5 whole on one pi3-collab board with `memory`.
void PredictAndMeasure(const std::string& dir, const std::string& memory,
                       double* predicted_ms, double* measured_ms) {
  auto port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status().message();
  const std::string file = dir + "/pi-" + memory + ".yaml";
  std::ofstream(file) << "devices:\n  - {name: pi, address: 127.0.0.1:" << *port
                      << ", board: pi3-collab, memory: " << memory << "}\n";
  const std::string plan = dir + "/plan-" + memory + ".json";
  const std::string shoal = testing::ShoalBinary();
  std::string out;
  ASSERT_EQ(testing::Shell(shoal + " plan lenet5 --cluster " + file +
                               " --strategy pipeline -o " + plan,
                           &out),
            0)
      << out;
  ASSERT_EQ(testing::Shell(shoal + " simulate --plan " + plan + " --cluster " +
                               file + " --requests 3 --json",
                           &out),
            0)
      << out;
  const auto sim = nlohmann::json::parse(out.substr(out.find('{')));
  *predicted_ms = sim["latency_ms"]["median"].get<double>();
  ASSERT_EQ(testing::Shell(shoal + " cluster up " + file, &out), 0) << out;
  const int rc =
      testing::Shell(shoal + " bench --plan " + plan + " --cluster " + file +
                         " --requests 3 --json 2>/dev/null",
                     &out);
  std::string down;
  testing::Shell(shoal + " cluster down " + file, &down);
  fs::remove_all(ClusterStateDir(file));
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  *measured_ms = j["latency_ms"]["median"].get<double>();
}

TEST(SwapEmulation, AWorkerThatSwapsTakesThePredictedPagingTime) {
  const std::string dir =
      ::testing::TempDir() + "/shoal-swap-" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  // 560 MiB leaves the framework (400 MiB) exactly what the board keeps
  // for itself besides (160 MiB): LeNet's weights, the copies of its
  // largest layer and its activations are all paged, about 0.3 s at 4 MiB/s.
  double tight_sim = 0, tight = 0, roomy_sim = 0, roomy = 0;
  PredictAndMeasure(dir, "560MiB", &tight_sim, &tight);
  if (HasFatalFailure()) return;
  PredictAndMeasure(dir, "1GiB", &roomy_sim, &roomy);
  if (HasFatalFailure()) return;
  EXPECT_GT(tight_sim, roomy_sim + 150) << "the simulator prices no paging";
  // Measured as predicted, loosely (the exact figure is a benchmark's).
  EXPECT_GT(tight, tight_sim * 0.8) << tight << " ms measured";
  EXPECT_LT(tight, tight_sim * 1.5 + 50) << tight << " ms measured";
  EXPECT_LT(roomy, tight - 150) << "the worker pages with room to spare";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shoal
