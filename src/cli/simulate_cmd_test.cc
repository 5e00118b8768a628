// `shoal simulate`'s bound as a user reads it: the larger of the shared
// and the chain bound, and a plan's median never below it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

TEST(SimulateCmd, BoundIsTheLargerOfSharedAndChainAndNoPlanBeatsIt) {
  const std::string cluster =
      std::string(SHOAL_SOURCE_DIR) + "/examples/pi4-4.yaml";
  const std::string plan = ::testing::TempDir() + "/simulate-bound.json";
  std::string out;
  for (const char* strategy : {"lop", "pipeline"}) {
    out.clear();
    ASSERT_EQ(
        RunCommand(std::string(SHOAL_BINARY) + " plan alexnet --cluster " +
                       cluster + " --strategy " + strategy + " -o " + plan,
                   &out),
        0)
        << out;
    out.clear();
    ASSERT_EQ(
        RunCommand(std::string(SHOAL_BINARY) + " simulate --plan " + plan +
                       " --cluster " + cluster + " --requests 3 --json",
                   &out),
        0)
        << out;
    const auto j = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << out;
    const auto& b = j["bound"];
    const double bound = b["bound_ms"].get<double>();
    EXPECT_NEAR(bound,
                std::min(b["one_device_ms"].get<double>(),
                         std::max(b["shared_ms"].get<double>(),
                                  b["chain_ms"].get<double>())),
                1e-9);
    // AlexNet on four Pi 4B: eleven layers that pay a step, over Ethernet
    // whose latency is far below a step's: the chain weighs more.
    EXPECT_EQ(b["chain_steps"].get<int>(), 11);
    EXPECT_GT(b["chain_ms"].get<double>(), b["shared_ms"].get<double>());
    EXPECT_GE(j["latency_ms"]["median"].get<double>(), bound) << strategy;
  }
  out.clear();
  ASSERT_EQ(RunCommand(std::string(SHOAL_BINARY) + " simulate --plan " + plan +
                           " --cluster " + cluster + " --requests 3",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("Chain: "), std::string::npos) << out;
  EXPECT_NE(out.find("11 of them paying a step"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
