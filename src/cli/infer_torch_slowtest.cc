// `shoal infer` (the binary, as a user runs it) against PyTorch: torchvision
// models with random weights are exported to ONNX at test time, run by
// PyTorch (eval, no_grad) and by `shoal infer --input --output` on the same
// .npy input, and must agree within 1e-4 of the output's largest magnitude;
// some are also planned (auto, 4 devices) and run distributed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/npy.h"
#include "onnx/onnx_test_util.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

// SPEC as test/py/export_torchvision.py takes it. "bn" keeps the
// BatchNormalization nodes torch would otherwise fold, so the engine's own
// BN folding is checked against PyTorch too.
// "plan" (ignored by the script) also plans the model with `auto` on 4
// devices and runs the plan locally against the single-device run;
// "windows" the same with `--strategy windows` (swin_t split by windows).
const std::vector<std::string> kSpecs = {
    "resnet18:13:run",
    "resnet18:13:bn:run",
    "mobilenet_v2:13:run",
    "alexnet:13:run",
    "vgg16:13:run",
    "googlenet:13:run",
    "squeezenet1_1:13:run:plan",
    // The models docs/models.md lists as covered by the ops of
    // docs/operators.md: HardSigmoid/HardSwish, Sigmoid gates, Resize,
    // LayerNormalization, Erf, Gather, attention's MatMul and Softmax.
    "mobilenet_v3_small:13:run:plan",
    "mobilenet_v3_small:17:run",
    "mobilenet_v3_large:17:run:plan",
    "efficientnet_b0:13:run:plan",
    "lraspp_mobilenet_v3_large:17:run:plan",
    "vit_b_16:17:run:plan",
    "convnext_tiny:17:run:plan",
    // Its shifted-window mask is built by Mod and ScatterND on constants.
    "swin_t:17:run:plan:windows",
    // Its attention's Einsums are read as MatMuls (onnx/einsum.h).
    "maxvit_t:17:run:plan",
    // Detection backbones (FPNs with nearest upsampling, SSD's extra layers
    // and L2Norm), every feature map flattened into one output.
    "fasterrcnn_mobilenet_v3_large_fpn:17:run:plan",
    "fasterrcnn_resnet50_fpn:17:run:plan",
    "retinanet_resnet50_fpn:17:run:plan",
    "fcos_resnet50_fpn:17:run",
    "ssdlite320_mobilenet_v3_large:17:run:plan",
    "ssd300_vgg16:17:run:plan",
    "deeplabv3_mobilenet_v3_large:17:run:plan",
    "fcn_resnet50:17:run:plan",
};

std::string Tag(std::string spec) {
  for (auto& c : spec)
    if (c == ':') c = '_';
  return spec;
}

class InferTorch : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() { dir_ = new TempDir(); }
  static void TearDownTestSuite() { delete dir_; }
  static TempDir* dir_;
};

TempDir* InferTorch::dir_ = nullptr;

TEST_P(InferTorch, CliMatchesPyTorch) {
  const std::string spec = GetParam(), tag = Tag(spec);
  // One export per test keeps the disk use to one model (VGG-16 is 0.5 GB).
  std::string out;
  const int rc = RunCommand(onnx_test::PyScript("export_torchvision.py") + " " +
                                dir_->path() + " " + spec,
                            &out);
  if (rc == onnx_test::kPythonSkip) GTEST_SKIP() << "torch missing: " << out;
  ASSERT_EQ(rc, 0) << out;
  const std::string model = dir_->File(tag + ".onnx"),
                    x = dir_->File(tag + ".input.npy"),
                    want_path = dir_->File(tag + ".output.npy"),
                    got_path = dir_->File(tag + ".shoal.npy");
  out.clear();
  ASSERT_EQ(RunCommand(std::string(SHOAL_BINARY) + " infer " + model +
                           " --input " + x + " --output " + got_path,
                       &out),
            0)
      << out;
  auto got = ReadNpy(got_path);
  auto want = ReadNpy(want_path);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  EXPECT_EQ(got->shape, want->shape);
  EXPECT_LE(MaxRelDiff(*got, *want), 1e-4) << spec;
  for (const std::string strategy : {"auto", "windows"}) {
    if (spec.find(":" + std::string(strategy == "auto" ? "plan" : strategy)) ==
        std::string::npos) {
      continue;
    }
    const std::string plan = dir_->File(tag + "." + strategy + ".json");
    out.clear();
    ASSERT_EQ(
        RunCommand(std::string(SHOAL_BINARY) + " plan " + model +
                       " --strategy " + strategy + " --devices 4 -o " + plan,
                   &out),
        0)
        << out;
    out.clear();
    EXPECT_EQ(RunCommand(std::string(SHOAL_BINARY) + " run --plan " + plan +
                             " --local --check",
                         &out),
              0)
        << strategy << ": " << out;
    EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
    std::filesystem::remove(plan);
  }
  std::filesystem::remove(model);
}

INSTANTIATE_TEST_SUITE_P(Torchvision, InferTorch, ::testing::ValuesIn(kSpecs),
                         [](const auto& info) { return Tag(info.param); });

}  // namespace
}  // namespace shoal
