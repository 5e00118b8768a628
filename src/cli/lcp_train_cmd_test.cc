// `shoal lcp train` as a user runs it: a short run on Fashion-MNIST learns,
// and the engine scores the written ONNX exactly as the trainer did; bad
// datasets end with a non-zero exit and a message naming the file.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/lcp_training.h"
#include "onnx/onnx_test_util.h"
#include "train/fashion_mnist.h"
#include "train/train_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

std::string Train(const std::string& args) {
  return std::string(SHOAL_BINARY) + " lcp train " + args;
}

nlohmann::json LastJson(const std::string& out) {
  const size_t at = out.rfind("\n{");
  return nlohmann::json::parse(out.substr(at == std::string::npos ? 0 : at + 1),
                               nullptr, false);
}

TEST(LcpTrainCmd, TimeLeftAtThePaceOfTheEpochSoFar) {
  TrainProgress p;
  p.epoch = 2;
  p.epochs = 3;
  p.batches = 100;
  EXPECT_LT(TrainSecondsLeft(p), 0) << "no batch yet: no pace";
  p.batch = 25;
  p.seconds = 5;  // 0.2 s a batch; 75 left in this epoch and 100 in the next
  EXPECT_DOUBLE_EQ(TrainSecondsLeft(p), 0.2 * 175);
}

TEST(LcpTrainCmd, ShortRunLearnsAndEngineAgrees) {
  ASSERT_TRUE(std::filesystem::is_directory(kDebianFashionMnistDir))
      << "install Debian's dataset-fashion-mnist (scripts/install-deps.sh)";
  TempDir dir;
  const std::string onnx = dir.File("lenet5-split2.onnx");
  std::string out;
  ASSERT_EQ(
      RunCommand(Train("lenet5 --branches 2 --dataset fashion-mnist "
                       "--limit 2000 --batch-size 32 --epochs 1 --threads 1 "
                       "--json -o " +
                       onnx),
                 &out),
      0)
      << out;
  const nlohmann::json j = LastJson(out);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["model"], "lenet5");
  EXPECT_EQ(j["branches"], 2);
  EXPECT_EQ(j["epochs"], 1);
  EXPECT_EQ(j["test_images"], 10000);
  EXPECT_EQ(j["params"], 31466);  // LeNet-split2, docs/lcp.md
  // Chance is 10%; these 63 steps reach 55% (seed 1, one thread).
  EXPECT_GT(j["test_accuracy"].get<double>(), 0.4) << out;
  EXPECT_EQ(j["engine_test_accuracy"].get<double>(),
            j["test_accuracy"].get<double>());
  EXPECT_LT(j["engine_max_abs_score_diff"].get<double>(), 1e-3);
  EXPECT_TRUE(std::filesystem::exists(onnx));
  // Progress went to stderr, one line per epoch (not a terminal here).
  EXPECT_NE(out.find("epoch 1/1 ["), std::string::npos) << out;
}

TEST(LcpTrainCmd, LearnsATinyDatasetDirectory) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 500, 100));
  std::string out;
  ASSERT_EQ(RunCommand(Train("lenet-fc --dataset " + dir.path() +
                             " --epochs 3 --threads 1 --json -o " +
                             dir.File("m.onnx")),
                       &out),
            0)
      << out;
  const nlohmann::json j = LastJson(out);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["test_images"], 100);
  EXPECT_GT(j["test_accuracy"].get<double>(), 0.9) << out;
  EXPECT_EQ(j["engine_test_accuracy"], j["test_accuracy"]);
}

// The Fig. 7 loop: the original, then the split fattened in steps until
// within the target; on a dataset both learn fully, the first step does.
TEST(LcpTrainCmd, FattenLoopStopsWithinTheTarget) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 500, 100));
  std::string out;
  const std::string onnx = dir.File("chosen.onnx");
  ASSERT_EQ(RunCommand(Train("lenet-fc --branches 2 --dataset " + dir.path() +
                             " --epochs 3 --threads 1 --target-accuracy-drop "
                             "5 --json -o " +
                             onnx),
                       &out),
            0)
      << out;
  const nlohmann::json j = LastJson(out);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_GT(j["original_test_accuracy"].get<double>(), 0.9) << out;
  ASSERT_GE(j["steps"].size(), 1u) << out;
  const auto& last = j["steps"].back();
  EXPECT_LE(last["drop_points"].get<double>(), 5.0);
  EXPECT_EQ(j["chosen_fatten_pct"], last["fatten_pct"]);
  EXPECT_TRUE(std::filesystem::exists(onnx));
  EXPECT_FALSE(std::filesystem::exists(onnx + ".step.onnx"));
  // Text mode names each step and the choice.
  ASSERT_EQ(RunCommand(Train("lenet-fc --branches 2 --dataset " + dir.path() +
                             " --epochs 3 --threads 1 --target-accuracy-drop "
                             "5 -o " +
                             onnx),
                       &out),
            0)
      << out;
  EXPECT_NE(out.find("fatten    0%: lenet-fc-split2"), std::string::npos)
      << out;
  EXPECT_NE(out.find("chose fatten 0%"), std::string::npos) << out;
  // Arguments that cannot loop.
  EXPECT_NE(RunCommand(Train("lenet-fc --dataset " + dir.path() +
                             " --target-accuracy-drop 2 -o " + onnx),
                       &out),
            0);
  EXPECT_NE(out.find("goes with --branches K"), std::string::npos) << out;
  EXPECT_NE(
      RunCommand(Train("lenet-fc --branches 2 --dataset " + dir.path() +
                       " --target-accuracy-drop 2 --fatten-step 0 -o " + onnx),
                 &out),
      0);
  EXPECT_NE(out.find("--fatten-step must be > 0"), std::string::npos) << out;
}

TEST(LcpTrainCmd, MissingDatasetDirectoryNamed) {
  TempDir dir;
  const std::string missing = dir.File("no-such-dataset");
  std::string out;
  EXPECT_NE(RunCommand(Train("lenet5 --dataset " + missing + " -o " +
                             dir.File("m.onnx")),
                       &out),
            0);
  EXPECT_NE(out.find("no-such-dataset"), std::string::npos) << out;
  EXPECT_NE(out.find("does not exist"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir.File("m.onnx")));
}

TEST(LcpTrainCmd, CorruptDatasetFileNamed) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 20, 10));
  ASSERT_TRUE(train_test::WriteGz(dir.File("train-images-idx3-ubyte.gz"),
                                  "not an IDX file at all"));
  std::string out;
  EXPECT_NE(RunCommand(Train("lenet5 --dataset " + dir.path() + " -o " +
                             dir.File("m.onnx")),
                       &out),
            0);
  EXPECT_NE(out.find("train-images-idx3-ubyte.gz"), std::string::npos) << out;
  EXPECT_NE(out.find("bad magic"), std::string::npos) << out;
}

TEST(LcpTrainCmd, ModelThatDoesNotFitTheImagesNamed) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 20, 10));
  std::string out;
  EXPECT_NE(RunCommand(Train("cifarnet --dataset " + dir.path() + " -o " +
                             dir.File("m.onnx")),
                       &out),
            0);
  EXPECT_NE(out.find("1x3x32x32"), std::string::npos) << out;
  EXPECT_NE(out.find("--input-shape 1,1,28,28"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
