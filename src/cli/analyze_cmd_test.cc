// `shoal analyze --accelerator` as a user runs it: every layer priced on the
// LCP paper's array, totals that add up, and a bad spec named.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

TEST(AnalyzeCmd, EveryLayerOnTheAcceleratorAddsUpToTheTotal) {
  std::string out;
  ASSERT_EQ(RunCommand(std::string(SHOAL_BINARY) +
                           " analyze alexnet --accelerator paper --json",
                       &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  double seconds = 0;
  int64_t cycles = 0;
  for (const auto& l : j["layers"]) {
    ASSERT_TRUE(l.contains("accelerator")) << l["name"];
    seconds += l["accelerator"]["seconds"].get<double>();
    cycles += l["accelerator"]["cycles"].get<int64_t>();
    const double u = l["accelerator"]["utilisation"].get<double>();
    EXPECT_GE(u, 0) << l["name"];
    EXPECT_LE(u, 1) << l["name"];
  }
  EXPECT_NEAR(j["accelerator"]["seconds"].get<double>(), seconds, 1e-12);
  EXPECT_EQ(j["accelerator"]["cycles"].get<int64_t>(), cycles);
  EXPECT_EQ(j["accelerator"]["rows"], 32);
  // The text form: the table and the utilisation per kind of MAC layer.
  out.clear();
  ASSERT_EQ(RunCommand(std::string(SHOAL_BINARY) +
                           " analyze alexnet --accelerator clock=800MHz",
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("systolic 32x64 at 800.0 MHz"), std::string::npos) << out;
  EXPECT_NE(out.find("Gemm: "), std::string::npos) << out;
}

TEST(AnalyzeCmd, ABadAcceleratorSpecIsNamed) {
  std::string out;
  EXPECT_EQ(RunCommand(std::string(SHOAL_BINARY) +
                           " analyze lenet5 --accelerator rows=32,banks=2",
                       &out),
            1)
      << out;
  EXPECT_NE(out.find("unknown key 'banks'"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
