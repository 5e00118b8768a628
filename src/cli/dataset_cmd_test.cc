// `shoal dataset extract` as a user runs it: PNG files named by their true
// labels whose pixels are the dataset's, and errors that say what is wrong.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "onnx/onnx_test_util.h"
#include "train/fashion_mnist.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using onnx_test::RunCommand;
using onnx_test::TempDir;

std::string Extract(const std::string& args) {
  return std::string(SHOAL_BINARY) + " dataset extract " + args;
}

nlohmann::json JsonOf(const std::string& out) {
  return nlohmann::json::parse(out.substr(std::min(out.find('{'), out.size())),
                               nullptr, false);
}

TEST(DatasetExtractCmd, WritesPngsWhosePixelsAreTheDatasets) {
  ASSERT_TRUE(fs::is_directory(kDebianFashionMnistDir))
      << "install Debian's dataset-fashion-mnist (scripts/install-deps.sh)";
  TempDir dir;
  const std::string out_dir = dir.File("images");
  std::string out;
  ASSERT_EQ(RunCommand(Extract("fashion-mnist --first 5 --count 7 --json -o " +
                               out_dir),
                       &out),
            0)
      << out;
  const nlohmann::json j = JsonOf(out);
  ASSERT_FALSE(j.is_discarded()) << out;
  ASSERT_EQ(j["files"].size(), 7u);
  EXPECT_EQ(
      std::distance(fs::directory_iterator(out_dir), fs::directory_iterator()),
      7);
  const ImageDataset d = LoadFashionMnist("fashion-mnist").value();
  const auto& names = FashionMnistClassNames();
  for (size_t k = 0; k < 7; ++k) {
    const nlohmann::json& f = j["files"][k];
    const int64_t index = 5 + static_cast<int64_t>(k);
    const int label = d.test.labels[index];
    EXPECT_EQ(f["index"], index);
    EXPECT_EQ(f["label"], label);
    EXPECT_EQ(f["name"], names[label]);
    const std::string path = f["path"];
    // The label, as a number and as the class's name, in the file's name.
    const std::string file = fs::path(path).filename();
    char prefix[32];
    std::snprintf(prefix, sizeof prefix, "test-%05d-%d-",
                  static_cast<int>(index), label);
    EXPECT_EQ(file.rfind(prefix, 0), 0u) << file;
    int w = 0, h = 0, c = 0;
    std::unique_ptr<stbi_uc, void (*)(void*)> px(
        stbi_load(path.c_str(), &w, &h, &c, 0), stbi_image_free);
    ASSERT_TRUE(px) << path;
    ASSERT_EQ(w, 28);
    ASSERT_EQ(h, 28);
    ASSERT_EQ(c, 1) << "a gray PNG";
    const uint8_t* want = d.test.pixels.data() + index * 28 * 28;
    EXPECT_TRUE(std::equal(want, want + 28 * 28, px.get())) << path;
  }
  // The names read: "Ankle boot" as ankle-boot, "T-shirt/top" as
  // t-shirt-top.
  out.clear();
  ASSERT_EQ(RunCommand(Extract("fashion-mnist --count 2 -o " + out_dir), &out),
            0)
      << out;
  EXPECT_TRUE(fs::exists(out_dir + "/test-00000-9-ankle-boot.png")) << out;
  EXPECT_TRUE(fs::exists(out_dir + "/test-00001-2-pullover.png")) << out;
  EXPECT_NE(out.find("Ankle boot"), std::string::npos) << out;
}

TEST(DatasetExtractCmd, TrainSplitAndBadRequests) {
  ASSERT_TRUE(fs::is_directory(kDebianFashionMnistDir));
  TempDir dir;
  std::string out;
  ASSERT_EQ(RunCommand(Extract("fashion-mnist --split train --count 1 -o " +
                               dir.path()),
                       &out),
            0)
      << out;
  const ImageDataset d = LoadFashionMnist("fashion-mnist").value();
  const int label = d.train.labels[0];
  const std::string want =
      dir.File("train-00000-" + std::to_string(label) + "-");
  EXPECT_NE(out.find(want), std::string::npos) << out;

  out.clear();
  EXPECT_NE(RunCommand(Extract("fashion-mnist --first 9999 --count 2 -o " +
                               dir.path()),
                       &out),
            0);
  EXPECT_NE(out.find("holds 10000 images"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(
      RunCommand(Extract("fashion-mnist --split val -o " + dir.path()), &out),
      0);
  EXPECT_NE(out.find("--split"), std::string::npos) << out;
  out.clear();
  EXPECT_NE(
      RunCommand(Extract(dir.File("nowhere") + " -o " + dir.path()), &out), 0);
  EXPECT_NE(out.find("nowhere"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
