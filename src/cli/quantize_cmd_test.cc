// `shoal quantize` as a user runs it: the QDQ model it writes passes
// onnx.checker, stores its weights in about a quarter of the f32 bytes, and
// `shoal infer` runs it; without calibration data for a model that is not a
// Fashion-MNIST one, it asks for --calibration; --evaluate measures both
// models on the test images, or names what it lacks.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
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
  if (rc != onnx_test::kPythonSkip) {
    EXPECT_EQ(rc, 0) << out;
  }

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

TEST(QuantizeCmd, EvaluatesBothModelsOnTheTestImages) {
  if (!std::filesystem::exists(kDebianFashionMnistDir))
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunCommand(Shoal("quantize lenet5 -o " + dir.File("q.onnx") +
                             " --calibration-samples 50 --evaluate "
                             "--evaluate-samples 200 --json"),
                       &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out.substr(out.find('{')));
  const auto& e = j.at("evaluation");
  ASSERT_EQ(e.at("images"), 200);
  EXPECT_EQ(e.at("backend"), "onednn");
  const double f32 = e.at("f32_accuracy"), int8 = e.at("int8_accuracy");
  EXPECT_GE(f32, 0);
  EXPECT_LE(f32, 1);
  EXPECT_GE(int8, 0);
  EXPECT_LE(int8, 1);
  EXPECT_NEAR(e.at("change_points").get<double>(), 100 * (int8 - f32), 1e-9);
  // Each image that changes its accuracy changes its class.
  const int64_t changed = e.at("changed_class");
  EXPECT_GE(changed, std::llround(200 * std::fabs(int8 - f32)));
  EXPECT_LE(changed, 200);
  EXPECT_LT(j.at("weight_bytes").at("int8").get<double>(),
            0.3 * j.at("weight_bytes").at("f32").get<double>());

  out.clear();
  ASSERT_EQ(RunCommand(Shoal("quantize lenet5 -o " + dir.File("q.onnx") +
                             " --calibration-samples 50 --evaluate "
                             "--evaluate-samples 20"),
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("accuracy on 20 test images of"), std::string::npos)
      << out;
  EXPECT_NE(out.find("of 20 images change class"), std::string::npos) << out;
}

TEST(QuantizeCmd, EvaluateNamesWhatItLacks) {
  TempDir dir;
  const std::string q = dir.File("q.onnx");
  std::string out;
  EXPECT_NE(
      RunCommand(Shoal("quantize cifarnet -o " + q + " --evaluate"), &out), 0);
  EXPECT_NE(out.find("'cifarnet' takes 1x3x32x32"), std::string::npos) << out;
  EXPECT_NE(out.find("1x1x28x28"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(RunCommand(Shoal("quantize lenet5 -o " + q + " --calibration " +
                             WriteImages(dir, 4) +
                             " --evaluate --calibration-dataset " +
                             dir.File("no-such-dataset")),
                       &out),
            0);
  EXPECT_NE(out.find("no-such-dataset"), std::string::npos) << out;
  // Both fail before anything is written.
  EXPECT_FALSE(std::filesystem::exists(q));
}

}  // namespace
}  // namespace shoal
