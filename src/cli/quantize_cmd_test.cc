// `shoal quantize` as a user runs it: the QDQ model it writes passes
// onnx.checker, stores its weights in about a quarter of the f32 bytes, and
// `shoal infer` runs it; without calibration data for a model that is not a
// Fashion-MNIST one, it asks for --calibration.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "io/npy.h"
#include "onnx/onnx_test_util.h"
#include "train/fashion_mnist.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

std::string Shoal(const std::string& args) {
  return std::string(SHOAL_BINARY) + " " + args;
}

// A stack of `n` random 1x28x28 images in [0, 1].
std::string WriteImages(const TempDir& dir, int n) {
  Tensor t({n, 1, 28, 28});
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  for (float& v : t.data) v = u(rng);
  const std::string path = dir.File("calib.npy");
  EXPECT_TRUE(WriteNpy(path, t).ok());
  return path;
}

TEST(QuantizeCmd, WritesAValidQuarterSizeModelThatInferRuns) {
  TempDir dir;
  const std::string q = dir.File("lenet5.int8.onnx");
  const std::string f = dir.File("lenet5.onnx");
  std::string out;
  ASSERT_EQ(RunCommand(Shoal("quantize lenet5 -o " + q + " --calibration " +
                             WriteImages(dir, 40)),
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("5 layers with int8 weights"), std::string::npos) << out;
  EXPECT_NE(out.find("40 inputs from 1 .npy file"), std::string::npos) << out;
  ASSERT_EQ(RunCommand(Shoal("export lenet5 -o " + f), &out), 0) << out;
  const double ratio = static_cast<double>(std::filesystem::file_size(q)) /
                       std::filesystem::file_size(f);
  EXPECT_LT(ratio, 0.3) << "int8 " << std::filesystem::file_size(q)
                        << " bytes, f32 " << std::filesystem::file_size(f);
  EXPECT_GT(ratio, 0.24);

  out.clear();
  const int rc =
      RunCommand(onnx_test::PyScript("check_onnx.py") + " " + q, &out);
  if (rc != onnx_test::kPythonSkip) EXPECT_EQ(rc, 0) << out;

  out.clear();
  EXPECT_EQ(RunCommand(Shoal("infer " + q + " --input-seed 1"), &out), 0)
      << out;
}

TEST(QuantizeCmd, CalibratesOnFashionMnistByDefault) {
  if (!std::filesystem::exists(kDebianFashionMnistDir))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunCommand(Shoal("quantize lenet-fc -o " + dir.File("q.onnx") +
                             " --calibration-samples 100"),
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("100 Fashion-MNIST training images"), std::string::npos)
      << out;
}

TEST(QuantizeCmd, AsksForCalibrationData) {
  TempDir dir;
  std::string out;
  EXPECT_NE(
      RunCommand(Shoal("quantize cifarnet -o " + dir.File("q.onnx")), &out), 0);
  EXPECT_NE(out.find("--calibration"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(RunCommand(Shoal("quantize lenet5 -o " + dir.File("q.onnx") +
                             " --calibration " + dir.File("missing.npy")),
                       &out),
            0);
  EXPECT_NE(out.find("missing.npy"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
