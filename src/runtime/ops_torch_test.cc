// Each op added for the torchvision models, in a small PyTorch model
// (test/py/export_torchvision.py: hard, gelu, layernorm, select, resize,
// dense, tokens) exported at opsets 13 and 17: `shoal infer`, on both
// backends, equals PyTorch within 1e-4 of the output's largest magnitude.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/npy.h"
#include "onnx/onnx_test_util.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

const char* const kNets[] = {"hard",   "gelu",  "layernorm", "select",
                             "resize", "dense", "tokens"};

class OpsTorch : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::string cmd =
        onnx_test::PyScript("export_torchvision.py") + " " + dir_->path();
    for (const char* n : kNets)
      for (const char* opset : {"13", "17"})
        cmd += std::string(" ") + n + ":" + opset + ":run";
    output_ = new std::string();
    rc_ = onnx_test::RunCommand(cmd, output_);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete output_;
  }
  void SetUp() override {
    if (rc_ == onnx_test::kPythonSkip)
      GTEST_SKIP() << "torch missing: " << *output_;
    ASSERT_EQ(rc_, 0) << *output_;
  }
  static TempDir* dir_;
  static std::string* output_;
  static int rc_;
};

TempDir* OpsTorch::dir_ = nullptr;
std::string* OpsTorch::output_ = nullptr;
int OpsTorch::rc_ = 0;

// The same exports, for tests that are not one per model.
class OpsTorchDense : public OpsTorch {};

TEST_P(OpsTorch, InferMatchesPyTorchOnBothBackends) {
  const std::string tag = GetParam();
  const std::string model = dir_->File(tag + ".onnx");
  auto want = ReadNpy(dir_->File(tag + ".output.npy"));
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  for (const char* backend : {"onednn", "reference"}) {
    const std::string got_path = dir_->File(tag + "." + backend + ".npy");
    std::string out;
    ASSERT_EQ(onnx_test::RunCommand(
                  std::string(SHOAL_BINARY) + " infer " + model + " --input " +
                      dir_->File(tag + ".input.npy") + " --output " + got_path +
                      " --backend " + backend,
                  &out),
              0)
        << out;
    auto got = ReadNpy(got_path);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->shape, want->shape) << backend;
    EXPECT_LE(MaxRelDiff(*got, *want), 1e-4) << tag << " " << backend;
  }
}

// Bias-free nn.Linear layers arrive as MatMul by a constant weight: every
// strategy splits them as it splits Gemm fc layers, and the distributed run
// equals the single-device run.
TEST_F(OpsTorchDense, MatMulByAWeightIsSplitByEveryStrategy) {
  const std::string model = dir_->File("dense_13_run.onnx");
  const std::vector<std::pair<std::string, std::string>> want = {
      {"lop", "lop"},    {"lip", "lip"},    {"channel", "lop"},
      {"filter", "lip"}, {"fuse", "fuse1"}, {"fuse-ilp", ""},
      {"auto", ""}};
  for (const auto& [strategy, scheme] : want) {
    SCOPED_TRACE(strategy);
    const std::string plan = dir_->File("dense." + strategy + ".json");
    std::string out;
    ASSERT_EQ(onnx_test::RunCommand(std::string(SHOAL_BINARY) + " plan " +
                                        model + " --devices 3 --strategy " +
                                        strategy + " --verbose -o " + plan,
                                    &out),
              0)
        << out;
    // The first layer is a split dense layer (named as torch named it).
    const size_t at = out.find("  /fc1/MatMul: ");
    ASSERT_NE(at, std::string::npos) << out;
    const std::string why = out.substr(at, out.find('\n', at) - at);
    EXPECT_EQ(why.find(": whole"), std::string::npos) << why;
    if (!scheme.empty()) {
      EXPECT_NE(why.find(": " + scheme + " "), std::string::npos) << why;
    }
    out.clear();
    EXPECT_EQ(onnx_test::RunCommand(std::string(SHOAL_BINARY) + " run --plan " +
                                        plan + " --local --check",
                                    &out),
              0)
        << out;
    EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  }
}

// Linear layers over token rows ([1, tokens, features]) are dense layers
// split by columns (lop) or input features (lip); attention's MatMuls of two
// activations stay whole.
TEST_F(OpsTorchDense, TokenRowsAreSplitAndAttentionKeptWhole) {
  const std::string model = dir_->File("tokens_17_run.onnx");
  for (const char* strategy : {"lop", "lip"}) {
    SCOPED_TRACE(strategy);
    const std::string plan =
        dir_->File(std::string("tokens.") + strategy + ".json");
    std::string out;
    ASSERT_EQ(onnx_test::RunCommand(std::string(SHOAL_BINARY) + " plan " +
                                        model + " --devices 3 --strategy " +
                                        strategy + " --verbose -o " + plan,
                                    &out),
              0)
        << out;
    for (const char* layer : {"/q/MatMul", "/k/MatMul"}) {
      EXPECT_NE(out.find(std::string("  ") + layer + ": " + strategy + " "),
                std::string::npos)
          << layer << "\n"
          << out;
    }
    EXPECT_NE(out.find("  /MatMul: whole"), std::string::npos) << out;
    out.clear();
    EXPECT_EQ(onnx_test::RunCommand(std::string(SHOAL_BINARY) + " run --plan " +
                                        plan + " --local --check",
                                    &out),
              0)
        << out;
    EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  }
}

std::vector<std::string> Tags() {
  std::vector<std::string> out;
  for (const char* n : kNets)
    for (const char* opset : {"13", "17"})
      out.push_back(std::string(n) + "_" + opset + "_run");
  return out;
}

INSTANTIATE_TEST_SUITE_P(Nets, OpsTorch, ::testing::ValuesIn(Tags()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace shoal
