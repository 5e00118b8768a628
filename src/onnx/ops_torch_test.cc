// Each op added for the torchvision models, in a small PyTorch model
// (test/py/export_torchvision.py: hard, gelu, layernorm, select, resize,
// dense, tokens) exported at opsets 13 and 17: `shoal infer`, on both
// backends, equals PyTorch within 1e-4 of the output's largest magnitude.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/backend_compare.h"
#include "io/npy.h"
#include "onnx/onnx_test_util.h"

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
