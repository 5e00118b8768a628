// An emulated board runs each task in its class's time, and a dilated
// cluster reports the same board time: `cluster up --dilation 1` and
// `--dilation 3` of one Raspberry Pi 3B+ give ResNet-18 the latency its
// class predicts, within loose bounds (the tight figure is a benchmark,
// bench/board_dilation.sh).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cluster/board.h"
#include "emulate/emulated_cluster.h"
#include "runtime/process_test_util.h"
#include "sim/board_fit.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

// Median latency (ms) and dilation `bench --json` reports for `plan` on
// `file` brought up with --dilation `k`.
void BenchAt(const std::string& file, const std::string& plan, double k,
             double* median_ms, double* dilation) {
  std::string out;
  const std::string shoal = testing::ShoalBinary();
  ASSERT_EQ(testing::Shell(shoal + " cluster up " + file + " --dilation " +
                               std::to_string(k),
                           &out),
            0)
      << out;
  const int rc =
      testing::Shell(shoal + " bench --plan " + plan + " --cluster " + file +
                         " --requests 4 --json 2>/dev/null",
                     &out);
  std::string down;
  testing::Shell(shoal + " cluster down " + file, &down);
  ASSERT_EQ(rc, 0) << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  *median_ms = j["latency_ms"]["median"].get<double>();
  *dilation = j["dilation"].get<double>();
}

TEST(BoardDilation, SameBoardTimeAtOneAndThree) {
  const std::string dir =
      ::testing::TempDir() + "/shoal-dilation-" + std::to_string(getpid());
  fs::remove_all(dir);
  fs::create_directories(dir);
  auto port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok()) << port.status().message();
  const std::string file = dir + "/pi.yaml";
  std::ofstream(file) << "devices:\n  - {name: pi, address: 127.0.0.1:" << *port
                      << ", board: pi3b+}\n";
  const std::string plan = dir + "/plan.json";
  std::string out;
  ASSERT_EQ(
      testing::Shell(testing::ShoalBinary() + " plan resnet18 --cluster " +
                         file + " --strategy pipeline -o " + plan,
                     &out),
      0)
      << out;
  auto predicted = PredictModelMs(FindBoard("pi3b+")->rates, "resnet18");
  ASSERT_TRUE(predicted.ok());
  double at1 = 0, at3 = 0, k1 = 0, k3 = 0;
  BenchAt(file, plan, 1, &at1, &k1);
  BenchAt(file, plan, 3, &at3, &k3);
  EXPECT_EQ(k1, 1);
  EXPECT_EQ(k3, 3);
  // Board time: the class's prediction for the zoo graph (the plan's has
  // its BatchNormalizations folded, a little less), plus the input's trip
  // (9 ms and 150 KB of pixels at 62 Mbit/s), loosely.
  for (double ms : {at1, at3}) {
    EXPECT_GT(ms, *predicted * 0.8) << "faster than the board";
    EXPECT_LT(ms, *predicted * 2) << "far slower than the board";
  }
  EXPECT_NEAR(at3 / at1, 1.0, 0.25) << at1 << " ms at 1, " << at3 << " at 3";
  fs::remove_all(ClusterStateDir(file));
  fs::remove_all(dir);
}

TEST(BoardDilation, WorkerRefusesBadBoardFlags) {
  const std::string w =
      testing::ShoalBinary() + " worker --listen 127.0.0.1:0 --no-announce ";
  for (const auto& [flags, says] :
       std::vector<std::pair<std::string, std::string>>{
           {"--board pi9", "--board 'pi9' is not a known class (pi3b+, pi4b"},
           {"--dilation 0.5", "--dilation must be between 1 and 1000"},
           {"--board pi4b --cpu-fraction 0.1", "give one"},
           {"--board pi3-lcp", "emulated by --cpu-fraction"}}) {
    std::string out;
    EXPECT_NE(testing::Shell(w + flags, &out), 0) << flags;
    EXPECT_NE(out.find(says), std::string::npos) << flags << ": " << out;
  }
}

}  // namespace
}  // namespace shoal
