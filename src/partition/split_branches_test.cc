#include "lcp/split_branches.h"

#include <gtest/gtest.h>

#include "graph/cost.h"
#include "graph/verify.h"
#include "lcp/splitter.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "partition/transformer_blocks.h"

namespace shoal {
namespace {

// x -> conv(8) -> bn -> relu -> [depthwise conv -> add(residual)] -> gap
//   -> flatten -> fc(16) -> relu -> fc(10) -> softmax
Graph Small() {
  GraphBuilder b("small");
  auto x = b.Input("x", {1, 3, 8, 8});
  auto y = b.Relu(b.BatchNorm("bn", b.Conv("conv", x, 8, 3, 1, 1)));
  auto d = b.Conv("dw", y, 8, 3, 1, 1, 8);
  y = b.Add(y, d);
  y = b.Flatten(b.GlobalAvgPool(y));
  y = b.Relu(b.Linear("fc1", y, 16));
  y = b.Softmax(b.Linear("fc2", y, 10));
  return b.Finish({y}).value();
}

TEST(SplitBranchesTest, BeforeAndAfter) {
  const Graph g = Small();
  auto s = SplitIntoBranches(g, {2, 0});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  const Graph& h = *s;
  EXPECT_TRUE(VerifyGraph(h).ok());
  // Each branch reads the full input, at half width.
  EXPECT_EQ(h.FindTensor("b0/conv.weight")->shape, (Shape{4, 3, 3, 3}));
  EXPECT_EQ(h.FindTensor("b1/conv.weight")->shape, (Shape{4, 3, 3, 3}));
  EXPECT_EQ(h.FindTensor("b1/bn.weight")->shape, (Shape{4}));
  // Depthwise: groups follow the channels.
  EXPECT_EQ(h.FindTensor("b0/dw.weight")->shape, (Shape{4, 1, 3, 3}));
  EXPECT_EQ(h.FindNode("b0/dw")->attrs.GetInt("group"), 4);
  EXPECT_EQ(h.FindTensor("b0/fc1.weight")->shape, (Shape{8, 4}));
  // The classifier keeps its 10 outputs and reads the 2 x 8 concatenation.
  EXPECT_EQ(h.FindNode(kLcpConcatNode)->inputs.size(), 2u);
  EXPECT_EQ(h.FindTensor(kLcpPrefinal)->shape, (Shape{1, 16}));
  EXPECT_EQ(h.FindTensor("fc2.weight")->shape, (Shape{10, 16}));
  EXPECT_EQ(h.FindTensor(h.outputs[0])->shape, (Shape{1, 10}));
  EXPECT_EQ(h.nodes.back().op, "Softmax");
  EXPECT_EQ(h.nodes.size(), 2 * 9 + 3u);  // 9 per branch, concat, fc2, softmax
}

TEST(SplitBranchesTest, FattenWidensBranchesNotTheClassifier) {
  auto s = SplitIntoBranches(Small(), {2, 50});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->FindTensor("b0/conv.weight")->shape, (Shape{6, 3, 3, 3}));
  EXPECT_EQ(s->FindTensor("b0/fc1.weight")->shape, (Shape{12, 6}));
  EXPECT_EQ(s->FindTensor("fc2.weight")->shape, (Shape{10, 24}));
}

TEST(SplitBranchesTest, ExtractBranchIsOneBranch) {
  auto s = SplitIntoBranches(Small(), {4, 0});
  ASSERT_TRUE(s.ok());
  auto b = ExtractBranch(*s, 3);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->nodes.size(), 9u);
  EXPECT_EQ(b->FindTensor(b->outputs[0])->shape, (Shape{1, 4}));
}

TEST(SplitBranchesTest, BadInputErrorsWithNumbers) {
  auto s = SplitIntoBranches(Small(), {17, 0});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().ToString().find("17"), std::string::npos);
  EXPECT_NE(s.status().ToString().find("width 16"), std::string::npos);
  EXPECT_FALSE(SplitIntoBranches(Small(), {0, 0}).ok());

  GraphBuilder b("noclassifier");
  auto x = b.Input("x", {1, 4});
  auto g = b.Finish({b.Relu(x)}).value();
  auto e = SplitIntoBranches(g, {2, 0});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().ToString().find("no classifier"), std::string::npos);
}

// The paper's Table II LeNet counts (61.7k, 31.5k, 16.1k, 8.8k).
TEST(SplitBranchesTest, LeNetMatchesTableII) {
  auto g = Zoo::Global().Find("lenet5")->build(
      Zoo::Global().Find("lenet5")->input_shape);
  ASSERT_TRUE(g.ok());
  const std::vector<std::pair<int64_t, double>> want = {
      {2, 31.5e3}, {4, 16.1e3}, {8, 8.8e3}};
  for (auto [k, params] : want) {
    auto s = SplitIntoBranches(*g, {k, 0});
    ASSERT_TRUE(s.ok());
    auto c = ComputeGraphCost(*s);
    ASSERT_TRUE(c.ok());
    EXPECT_NEAR(c->params, params, 50) << "split" << k;
  }
}

TEST(SplitBranchesTest, EveryZooModelSplits) {
  for (const auto& e : Zoo::Global().entries()) {
    auto g = e.build(e.input_shape);
    ASSERT_TRUE(g.ok()) << e.name;
    // LCP narrows conv and fc channels into branches; a transformer's
    // attention and class token are refused with a reason (docs/models.md).
    if (!FindAttentionBlocks(*g).empty()) {
      auto s = SplitIntoBranches(*g, {2, 0.0});
      ASSERT_FALSE(s.ok()) << e.name;
      EXPECT_FALSE(s.status().message().empty()) << e.name;
      continue;
    }
    auto base = ComputeGraphCost(*g);
    for (int64_t k : {2, 4, 8}) {
      auto s = SplitIntoBranches(*g, {k, k == 8 ? 40.0 : 0.0});
      ASSERT_TRUE(s.ok()) << e.name << " K=" << k << ": "
                          << s.status().ToString();
      EXPECT_EQ(s->FindTensor(s->outputs[0])->shape,
                g->FindTensor(g->outputs[0])->shape)
          << e.name;
      auto c = ComputeGraphCost(*s);
      ASSERT_TRUE(c.ok());
      // Fattened LeNet-FC outgrows its original: every branch's first layer
      // reads the whole 784-pixel input.
      if (k != 8) {
        EXPECT_LT(c->params, base->params) << e.name << " K=" << k;
      }
      auto sum = SummarizeSplit(*g, *s, k, 0);
      ASSERT_TRUE(sum.ok()) << e.name;
      EXPECT_LE(sum->params_per_branch * k, c->params) << e.name;
    }
  }
}

TEST(SplitBranchesTest, SharesMakeUnequalBranches) {
  const Graph g = Small();
  // 3:1 over conv(8) and fc1(16): 6 and 2 channels, 12 and 4 features.
  auto s = SplitIntoBranches(g, {2, 0, {3, 1}});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->FindTensor("b0/conv.weight")->shape, (Shape{6, 3, 3, 3}));
  EXPECT_EQ(s->FindTensor("b1/conv.weight")->shape, (Shape{2, 3, 3, 3}));
  EXPECT_EQ(s->FindTensor("b0/dw.weight")->shape, (Shape{6, 1, 3, 3}));
  EXPECT_EQ(s->FindNode("b1/dw")->attrs.GetInt("group"), 2);
  EXPECT_EQ(s->FindTensor("b0/fc1.weight")->shape[0], 12);
  EXPECT_EQ(s->FindTensor("b1/fc1.weight")->shape[0], 4);
  // The classifier reads both: 16 features, at full output width.
  EXPECT_EQ(s->FindTensor("fc2.weight")->shape, (Shape{10, 16}));
  EXPECT_NE(s->name.find("uneven"), std::string::npos);
  auto sum = SummarizeSplit(g, *s, 2, 0);
  ASSERT_TRUE(sum.ok()) << sum.status().ToString();
  ASSERT_EQ(sum->branch_macs.size(), 2u);
  EXPECT_GT(sum->branch_macs[0], 2 * sum->branch_macs[1]);
  EXPECT_EQ(sum->macs_per_branch, sum->branch_macs[0]) << "the largest";
  // A tiny share still keeps one channel per layer.
  auto tiny = SplitIntoBranches(g, {2, 0, {1000, 1}});
  ASSERT_TRUE(tiny.ok()) << tiny.status().ToString();
  EXPECT_EQ(tiny->FindTensor("b1/conv.weight")->shape[0], 1);
}

TEST(SplitBranchesTest, EqualSharesAreTheEqualSplit) {
  const Graph g = Small();
  auto plain = SplitIntoBranches(g, {4, 0});
  auto shared = SplitIntoBranches(g, {4, 0, {2.5, 2.5, 2.5, 2.5}});
  ASSERT_TRUE(plain.ok() && shared.ok());
  EXPECT_EQ(plain->name, shared->name);
  for (const auto& n : plain->nodes) {
    for (const auto& w : plain->WeightInputs(n)) {
      EXPECT_EQ(plain->FindTensor(w)->shape, shared->FindTensor(w)->shape) << w;
    }
  }
}

TEST(SplitBranchesTest, BadSharesAreRefused) {
  const Graph g = Small();
  auto count = SplitIntoBranches(g, {2, 0, {1, 1, 1}});
  ASSERT_FALSE(count.ok());
  EXPECT_NE(count.status().message().find("3 branch shares for 2 branches"),
            std::string::npos)
      << count.status().message();
  EXPECT_FALSE(SplitIntoBranches(g, {2, 0, {1, 0}}).ok());
  EXPECT_FALSE(SplitIntoBranches(g, {2, 0, {1, -1}}).ok());
}

}  // namespace
}  // namespace shoal
