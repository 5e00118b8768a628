// `shoal lcp prune` as a user runs it: a trained LCP model pruned and
// fine-tuned on a tiny dataset it learns fully comes back narrower and as
// accurate, written as a file the engine loads; nothing to prune is an
// error that says so.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "models/load_model.h"
#include "onnx/onnx_test_util.h"
#include "train/train_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

nlohmann::json LastJson(const std::string& out) {
  const size_t at = out.rfind("\n{");
  return nlohmann::json::parse(out.substr(at == std::string::npos ? 0 : at + 1),
                               nullptr, false);
}

class LcpPruneCmd : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(train_test::WriteTinyDataset(dir_.path(), 500, 100));
    std::string out;
    ASSERT_EQ(
        RunCommand(std::string(SHOAL_BINARY) +
                       " lcp train lenet-fc --branches 2 --dataset " +
                       dir_.path() + " --epochs 3 --threads 1 -o " + trained(),
                   &out),
        0)
        << out;
  }
  std::string trained() { return dir_.File("split2.onnx"); }
  std::string Prune(const std::string& args) {
    return std::string(SHOAL_BINARY) + " lcp prune " + trained() +
           " --dataset " + dir_.path() + " --threads 1 " + args;
  }
  TempDir dir_;
};

TEST_F(LcpPruneCmd, NarrowerAndAsAccurateAfterFineTuning) {
  const std::string pruned = dir_.File("pruned.onnx");
  std::string out;
  ASSERT_EQ(
      RunCommand(Prune("--ratio 0.5 --epochs 2 --json -o " + pruned), &out), 0)
      << out;
  const nlohmann::json j = LastJson(out);
  ASSERT_FALSE(j.is_discarded()) << out;
  // lenet-fc split2: each branch's fc1 (150 outputs) and fc2 (50) keep
  // half; fc3 reads the concatenation and keeps its 10.
  ASSERT_EQ(j["layers"].size(), 2u) << out;
  EXPECT_EQ(j["layers"][0]["before"], 150);
  EXPECT_EQ(j["layers"][0]["after"], 75);
  EXPECT_LT(j["fine_tuned"]["params"].get<int64_t>(),
            j["original"]["params"].get<int64_t>() / 2 + 1000);
  EXPECT_GT(j["original"]["test_accuracy"].get<double>(), 0.9) << out;
  EXPECT_GT(j["fine_tuned"]["test_accuracy"].get<double>(), 0.9) << out;
  LoadOptions lo;
  lo.with_weights = true;
  auto m = LoadModel(pruned, lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->graph.FindTensor(m->graph.outputs[0])->shape, (Shape{1, 10}));
}

TEST_F(LcpPruneCmd, NoEpochsWritesThePrunedWeightsAsTheyAre) {
  std::string out;
  ASSERT_EQ(RunCommand(Prune("--ratio 0.25 --epochs 0 --json -o " +
                             dir_.File("p.onnx")),
                       &out),
            0)
      << out;
  const nlohmann::json j = LastJson(out);
  ASSERT_FALSE(j.is_discarded()) << out;
  EXPECT_EQ(j["fine_tuned"]["test_accuracy"], j["pruned"]["test_accuracy"]);
  EXPECT_EQ(j["train_images"], 0);
}

TEST_F(LcpPruneCmd, NothingToPruneOrABadRatioIsAnErrorThatSaysSo) {
  std::string out;
  EXPECT_EQ(RunCommand(Prune("--ratio 0 -o " + dir_.File("p.onnx")), &out), 1);
  EXPECT_NE(out.find("nothing in"), std::string::npos) << out;
  EXPECT_EQ(RunCommand(Prune("--ratio 1 -o " + dir_.File("p.onnx")), &out), 1);
  EXPECT_NE(out.find("ratio must be in [0, 1)"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(dir_.File("p.onnx")));
}

}  // namespace
}  // namespace shoal
