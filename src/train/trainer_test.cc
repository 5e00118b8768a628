// TrainGraph on a tiny dataset: the branches trained batched give the same
// weights (BatchNorm statistics included) as trained node by node, and bad
// pairings of model and data are refused with the numbers.
#include "train/trainer.h"

#include <gtest/gtest.h>

#include <cmath>

#include "lcp/split_branches.h"
#include "models/builder.h"
#include "onnx/onnx_test_util.h"
#include "train/train_test_util.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

Graph SmallBnNet() {
  GraphBuilder b("small-bn");
  auto x = b.Input("input", {1, 1, 28, 28});
  // No conv bias before BN: its gradient is 0 up to rounding, which Adam
  // would scale up to full steps, differently in the two runs.
  x = b.Relu(b.BatchNorm("bn1", b.Conv("conv1", x, 4, 5, 2, 2, 1, false)));
  x = b.MaxPool(x, {2}, {2});
  x = b.Dropout(b.Relu(b.Linear("fc1", b.Flatten(x), 16)), 0.f);
  auto g = b.Finish({b.Linear("fc2", x, 10)});
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

StatusOr<TrainResult> TrainTiny(const Graph& g, const std::string& dir,
                                bool batch_branches) {
  ASSIGN_OR_RETURN(ImageDataset d, LoadFashionMnist(dir));
  TrainOptions o;
  o.epochs = 2;
  o.batch_size = 16;
  o.threads = 1;
  o.batch_branches = batch_branches;
  return TrainGraph(g, d, o);
}

TEST(Trainer, BatchedBranchesTrainLikeNodeByNode) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 96, 40));
  auto g = SplitIntoBranches(SmallBnNet(), {2, 0});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto batched = TrainTiny(*g, dir.path(), true);
  auto plain = TrainTiny(*g, dir.path(), false);
  ASSERT_TRUE(batched.ok()) << batched.status().ToString();
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(batched->branches_batched) << batched->why_not_batched;
  EXPECT_FALSE(plain->branches_batched);
  ASSERT_EQ(batched->weights.size(), plain->weights.size());
  for (const auto& [name, t] : plain->weights) {
    const Tensor& u = batched->weights.at(name);
    double diff = 0, scale = 1e-6;
    for (size_t i = 0; i < t.data.size(); ++i) {
      diff = std::max(diff, double{std::fabs(t.data[i] - u.data[i])});
      scale = std::max(scale, double{std::fabs(t.data[i])});
    }
    EXPECT_LT(diff / scale, 1e-3) << name;
  }
  // The running statistics moved away from their initial 0 and 1.
  EXPECT_NE(plain->weights.at("b1/bn1.running_mean").data[0], 0.f);
  EXPECT_NEAR(batched->test_accuracy, plain->test_accuracy, 0.03);
}

// Sample standard deviation of a weight's values.
double StdDev(const std::vector<float>& v) {
  double s = 0, s2 = 0;
  for (float x : v) s += x, s2 += double(x) * x;
  const double m = s / v.size();
  return std::sqrt(s2 / v.size() - m * m);
}

TEST(Trainer, InitialWeightsHeOrThePapersStd) {
  GraphBuilder b("init");
  auto x = b.Input("input", {1, 3, 16, 16});
  x = b.Relu(b.Conv("conv1", x, 64, 5));  // fan-in 3 x 5 x 5 = 75
  x = b.Linear("fc1", b.Flatten(x), 32);  // fan-in 64 x 12 x 12 = 9216
  auto g = b.Finish({x});
  ASSERT_TRUE(g.ok()) << g.status().ToString();

  const WeightStore he = InitialWeights(*g, 0, 7);
  EXPECT_NEAR(StdDev(he.at("conv1.weight").data), std::sqrt(2.0 / 75), 0.01);
  EXPECT_NEAR(StdDev(he.at("fc1.weight").data), std::sqrt(2.0 / 9216), 0.001);
  for (float v : he.at("conv1.bias").data) EXPECT_EQ(v, 0.f);

  const WeightStore paper = InitialWeights(*g, 0.04, 7);
  EXPECT_NEAR(StdDev(paper.at("conv1.weight").data), 0.04, 0.003);
  EXPECT_NEAR(StdDev(paper.at("fc1.weight").data), 0.04, 0.001);
}

TEST(Trainer, StartsFromGivenWeightsWhenAsked) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 64, 16));
  GraphBuilder b("plain");
  auto x = b.Input("input", {1, 1, 28, 28});
  x = b.MaxPool(b.Relu(b.Conv("conv1", x, 4, 5)), {2}, {2});
  auto g = b.Finish({b.Linear("fc1", b.Flatten(x), 10)});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  auto data = LoadFashionMnist(dir.path());
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  TrainOptions o;
  o.epochs = 1;
  o.batch_size = 16;
  o.threads = 1;
  auto first = TrainGraph(*g, *data, o);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  // From those weights with a zero step: they come back as they went in,
  // and they are not the initial ones.
  o.initial = &first->weights;
  o.lr = 0;
  auto again = TrainGraph(*g, *data, o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  const WeightStore init = InitialWeights(*g, 0, o.seed);
  for (const auto& [name, t] : first->weights) {
    EXPECT_EQ(again->weights.at(name).data, t.data) << name;
  }
  EXPECT_NE(first->weights.at("conv1.weight").data,
            init.at("conv1.weight").data);
  // Weights that do not fit the graph are refused.
  WeightStore short_of_one = first->weights;
  short_of_one.erase("fc1.bias");
  o.initial = &short_of_one;
  EXPECT_FALSE(TrainGraph(*g, *data, o).ok());
}

TEST(Trainer, RefusesModelsThatDoNotFitTheData) {
  TempDir dir;
  ASSERT_TRUE(train_test::WriteTinyDataset(dir.path(), 16, 8));
  GraphBuilder b("five-classes");
  auto x = b.Flatten(b.Input("input", {1, 1, 28, 28}));
  auto g = b.Finish({b.Linear("fc", x, 5)});
  ASSERT_TRUE(g.ok());
  auto r = TrainTiny(*g, dir.path(), true);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("1x5"), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("10 classes"), std::string::npos);
}

}  // namespace
}  // namespace shoal
