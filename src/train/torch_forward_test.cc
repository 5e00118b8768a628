// The libtorch interpreter of shoal graphs against shoal's engine on the same
// weights: equal to 1e-4 relative, a batch of images at once against one
// engine run per image.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/backend_run_test_util.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "lcp/split_branches.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "train/trainer.h"

namespace shoal {
namespace {

Graph Zoo(const std::string& name) {
  const ZooEntry* e = Zoo::Global().Find(name);
  EXPECT_NE(e, nullptr) << name;
  auto g = e->build(e->input_shape);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

// Runs a batch of `n` seeded inputs through libtorch at once and each through
// the oneDNN engine alone; with the branches batched (where `batchable`) and
// node by node.
void ExpectTorchEqualsEngine(const Graph& g, const WeightStore& w, int n,
                             bool batchable = false) {
  for (bool batch_branches : {true, false}) {
    SCOPED_TRACE(batch_branches ? "branches batched" : "node by node");
    Shape batch = g.FindTensor(g.inputs[0])->shape;
    const Shape one = batch;
    batch[0] = n;
    Tensor x = RandomInput(batch, 7);
    bool batched = false;
    auto torch_out = TorchForward(g, w, {x}, batch_branches, &batched);
    ASSERT_TRUE(torch_out.ok()) << torch_out.status().ToString();
    EXPECT_EQ(batched, batch_branches && batchable);
    ASSERT_EQ(torch_out->size(), 1u);
    const Tensor& y = (*torch_out)[0];
    const int64_t per = y.size() / n;
    for (int i = 0; i < n; ++i) {
      Tensor xi(
          one, std::vector<float>(x.data.begin() + i * NumElements(one),
                                  x.data.begin() + (i + 1) * NumElements(one)));
      auto ref = RunWith(g, w, Backend::kOneDnn, {xi});
      ASSERT_EQ(ref.size(), 1u);
      ASSERT_EQ(ref[0].size(), per) << g.name;
      Tensor yi(ref[0].shape,
                std::vector<float>(y.data.begin() + i * per,
                                   y.data.begin() + (i + 1) * per));
      EXPECT_LT(MaxRelDiff(yi, ref[0]), 1e-4) << g.name << " image " << i;
    }
  }
}

TEST(TorchForward, LeNet5EqualsEngine) {
  const Graph g = Zoo("lenet5");
  ExpectTorchEqualsEngine(g, RandomWeights(g, 3), 3);
}

TEST(TorchForward, BranchedLeNet5EqualsEngine) {
  for (auto [k, fat] : {std::pair<int64_t, double>{2, 0}, {8, 40}}) {
    auto g = SplitIntoBranches(Zoo("lenet5"), {k, fat});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ExpectTorchEqualsEngine(*g, RandomWeights(*g, 4), 3, true);
  }
}

TEST(TorchForward, BranchedLeNetFcAndCifarNetEqualEngine) {
  // CifarNet's branches hold LRN and Dropout.
  for (const char* name : {"lenet-fc", "cifarnet"}) {
    auto g = SplitIntoBranches(Zoo(name), {4, 20});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ExpectTorchEqualsEngine(*g, RandomWeights(*g, 8), 2, true);
  }
}

// Unequal branches (sized for unequal devices) do not stack side by side:
// they run node by node, and still equal the engine.
TEST(TorchForward, UnequalBranchesRunNodeByNode) {
  auto g = SplitIntoBranches(Zoo("lenet5"), {3, 0, {3, 1, 1}});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ExpectTorchEqualsEngine(*g, RandomWeights(*g, 4), 2, false);
}

// Unbranched LeNet-FC, CifarNet and the rest of the zoo: torch_zoo_slowtest.cc.

// BatchNorm, asymmetric pads, average and global pools, concat, add,
// softmax, as the bigger zoo models use them.
Graph MixedOps() {
  GraphBuilder b("mixed");
  auto x = b.Input("x", {1, 3, 11, 11});
  GraphBuilder::ConvOpts o;
  o.stride = {2};
  o.pad = {0, 0, 1, 1};
  auto c = b.Relu(b.BatchNorm("bn", b.Conv("c1", x, 6, {3}, o)));
  auto m = b.MaxPool(c, {3}, {2}, {0, 0, 1, 1});
  auto a = b.AvgPool(b.AvgPool(c, {2}, {2}), {3}, {1}, {1}, true);
  auto cat = b.Concat({m, a}, 1);
  auto s = b.Add(cat, b.Conv("c2", cat, 12, 1));
  auto f = b.Linear("fc", b.Flatten(b.GlobalAvgPool(b.LeakyRelu(s, 0.1f))), 4);
  auto g = b.Finish({b.Softmax(f)});
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

WeightStore PositiveVariances(const Graph& g, WeightStore w) {
  for (auto& [name, t] : w)
    if (name.find("running_var") != std::string::npos)
      for (auto& v : t.data) v = 0.5f + std::fabs(v);
  return w;
}

TEST(TorchForward, OpsBeyondTheLeNetsEqualEngine) {
  const Graph g = MixedOps();
  ExpectTorchEqualsEngine(g, PositiveVariances(g, RandomWeights(g, 6)), 2);
  auto split = SplitIntoBranches(g, {3, 0});
  ASSERT_TRUE(split.ok()) << split.status().ToString();
  ExpectTorchEqualsEngine(
      *split, PositiveVariances(*split, RandomWeights(*split, 6)), 2, true);
}

TEST(TorchForward, UnsupportedOpNamed) {
  Graph g = Zoo("lenet-fc");
  for (auto& n : g.nodes)
    if (n.op == "Relu") {
      n.op = "Erf";
      break;
    }
  auto out = TorchForward(g, RandomWeights(g, 1), {Tensor({1, 1, 28, 28})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'Erf'"), std::string::npos)
      << out.status().ToString();
}

}  // namespace
}  // namespace shoal
