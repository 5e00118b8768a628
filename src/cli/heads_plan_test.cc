// vit_b_16 split by heads over four Pi 4B, as a user plans and runs it: the
// plan keeps each device's heads' attention on that device, and `run
// --local --check` gives the one-device output. At 64x64 (17 tokens) the
// blocks are ViT-B's own (768 features, 12 heads, MLP of 3072) and the run
// takes seconds; at 224x224 the plan is the same per token.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

TEST(HeadsPlan, VitB16OnFourPi4IsExactThroughRunLocal) {
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = ::testing::TempDir() + "/vit_heads_plan.json";
  std::string out;
  ASSERT_EQ(RunCommand(shoal + " plan vit_b_16 --input-shape 1x3x64x64 " +
                           "--cluster " + SHOAL_SOURCE_DIR +
                           "/examples/pi4-4.yaml --strategy heads --verbose " +
                           "-o " + plan,
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("self_attention.scores: parts - MatMul runs on each "
                     "device's part of"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("self_attention.q: lop"), std::string::npos) << out;
  EXPECT_NE(out.find("self_attention.out_proj: lip"), std::string::npos)
      << out;
  ASSERT_EQ(
      RunCommand(shoal + " run --plan " + plan + " --local --check", &out), 0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
