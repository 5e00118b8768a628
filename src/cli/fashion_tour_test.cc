// README's tour of a real model, as a user runs it: `lcp train` writes
// LeNet-5 trained on Fashion-MNIST with its class names and input scaling
// in the file, `dataset extract` writes test images named by their labels,
// and `infer --image` and `run --image` name their classes; the model
// classifies the extracted images well above chance.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "engine/executor.h"
#include "io/image.h"
#include "io/image_metadata.h"
#include "models/load_model.h"
#include "onnx/onnx_test_util.h"
#include "train/fashion_mnist.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using onnx_test::RunCommand;
using onnx_test::TempDir;

std::string Shoal(const std::string& args) {
  return std::string(SHOAL_BINARY) + " " + args;
}

nlohmann::json LastJson(const std::string& out) {
  const size_t at = out.rfind("\n{");
  return nlohmann::json::parse(out.substr(at == std::string::npos ? 0 : at + 1),
                               nullptr, false);
}

TEST(FashionTour, TrainedModelNamesTheClassesOfExtractedImages) {
  ASSERT_TRUE(fs::is_directory(kDebianFashionMnistDir))
      << "install Debian's dataset-fashion-mnist (scripts/install-deps.sh)";
  TempDir dir;
  const std::string model = dir.File("fashion.onnx");
  std::string out;
  // A short run: 2000 images, one epoch, 72 % of the test set (seed 1).
  ASSERT_EQ(RunCommand(Shoal("lcp train lenet5 --dataset fashion-mnist "
                             "--limit 2000 --batch-size 32 --epochs 1 "
                             "--threads 1 -o " +
                             model),
                       &out),
            0)
      << out;
  // The file says what it is: Fashion-MNIST's names, pixels / 255.
  const ModelMetadata md = LoadModelMetadata(model).value();
  EXPECT_EQ(ClassNamesOf(md).value(), FashionMnistClassNames());
  const ImageNormalization norm = ImageNormalizationOf(md, 1).value();
  EXPECT_EQ(norm.mean, std::vector<float>{0.f});
  EXPECT_EQ(norm.std, std::vector<float>{1.f});

  const int kImages = 100;
  out.clear();
  ASSERT_EQ(RunCommand(Shoal("dataset extract fashion-mnist --count " +
                             std::to_string(kImages) + " --json -o " +
                             dir.File("test")),
                       &out),
            0)
      << out;
  const nlohmann::json files = LastJson(out)["files"];
  ASSERT_EQ(files.size(), static_cast<size_t>(kImages)) << out;

  // Each extracted image, read as `infer --image` reads it, by the engine.
  LoadOptions lo;
  lo.with_weights = true;
  const Model m = LoadModel(model, lo).value();
  const Shape in = m.graph.tensors.at(m.graph.inputs[0]).shape;
  auto ex = Executor::Create(m.graph, m.weights, ExecutorOptions{}).value();
  int correct = 0;
  for (const auto& f : files) {
    auto x = LoadImage(f["path"], in, norm);
    ASSERT_TRUE(x.ok()) << x.status().message();
    std::vector<Tensor> y;
    ASSERT_TRUE(ex->Run({*x}, &y).ok());
    const auto& s = y[0].data;
    correct += std::max_element(s.begin(), s.end()) - s.begin() ==
               f["label"].get<int>();
  }
  // Chance is 10 of 100; 73 are right (seed 1, one thread).
  EXPECT_GT(correct, 35) << correct << " of " << kImages << " right";

  // The CLI names the class it finds, by the model's own names.
  const std::string image = files[0]["path"];
  out.clear();
  ASSERT_EQ(
      RunCommand(Shoal("infer " + model + " --image " + image + " --json"),
                 &out),
      0)
      << out;
  const nlohmann::json top = LastJson(out)["top_classes"][0];
  const auto& names = FashionMnistClassNames();
  EXPECT_EQ(top["name"], names[top["index"].get<int>()]) << out;
  // ...and so does a plan of it run across devices.
  out.clear();
  ASSERT_EQ(
      RunCommand(Shoal("plan " + model + " --devices 2 --strategy lop -o " +
                       dir.File("plan.json")),
                 &out),
      0)
      << out;
  out.clear();
  ASSERT_EQ(RunCommand(Shoal("run --plan " + dir.File("plan.json") +
                             " --local --check --image " + image),
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("class " + std::to_string(top["index"].get<int>()) + " " +
                     top["name"].get<std::string>()),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace shoal
