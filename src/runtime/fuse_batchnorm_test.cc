#include "graph/fuse_batchnorm.h"

#include <gtest/gtest.h>

#include "engine/executor.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "models/zoo.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

// x -> conv (optionally biased) -> bn -> relu, and optionally a second
// reader of the conv output.
Model ConvBn(bool conv_bias, bool second_reader) {
  Model m;
  Graph& g = m.graph;
  g.name = "convbn";
  EXPECT_TRUE(g.AddInput("x", {1, 3, 9, 9}).ok());
  EXPECT_TRUE(g.AddWeight("conv.weight", {5, 3, 3, 3}).ok());
  std::vector<std::string> in = {"x", "conv.weight"};
  if (conv_bias) {
    EXPECT_TRUE(g.AddWeight("conv.bias", {5}).ok());
    in.push_back("conv.bias");
  }
  Attrs ca;
  ca.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_TRUE(g.AddNode({"conv", "Conv", in, {"c"}, ca}).ok());
  for (const char* p : {"bn.scale", "bn.b", "bn.mean", "bn.var"})
    EXPECT_TRUE(g.AddWeight(p, {5}).ok());
  Attrs ba;
  ba.Set("epsilon", 1e-3f);
  EXPECT_TRUE(g.AddNode({"bn",
                         "BatchNormalization",
                         {"c", "bn.scale", "bn.b", "bn.mean", "bn.var"},
                         {"y"},
                         ba})
                  .ok());
  EXPECT_TRUE(g.AddNode({"relu", "Relu", {"y"}, {"out"}, {}}).ok());
  g.outputs = {"out"};
  if (second_reader) {
    EXPECT_TRUE(g.AddNode({"sig", "Sigmoid", {"c"}, {"s"}, {}}).ok());
    g.outputs.push_back("s");
  }
  EXPECT_TRUE(InferShapes(&g).ok());
  m.weights = RandomWeights(g, 5);
  return m;
}

std::vector<Tensor> RunRef(const Model& m, const Tensor& x) {
  return RunWith(m.graph, m.weights, Backend::kReference, {x});
}

class FuseBatchNormTest : public ::testing::TestWithParam<bool> {};

TEST_P(FuseBatchNormTest, SameOutputWithoutTheBn) {
  const bool conv_bias = GetParam();
  Model m = ConvBn(conv_bias, false);
  const Tensor x = RandomInput({1, 3, 9, 9}, 11);
  const auto before = RunRef(m, x);
  auto fused = FuseBatchNorm(&m);
  ASSERT_TRUE(fused.ok()) << fused.status().ToString();
  EXPECT_EQ(*fused, 1);
  ASSERT_TRUE(VerifyGraph(m.graph).ok());
  ASSERT_EQ(m.graph.nodes.size(), 2u);
  const Node& conv = m.graph.nodes[0];
  EXPECT_EQ(conv.outputs, std::vector<std::string>{"y"});  // the BN's output
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(conv.inputs[2], "conv.bias");
  EXPECT_FALSE(m.graph.FindTensor("bn.mean"));
  EXPECT_FALSE(m.weights.count("bn.var"));
  EXPECT_FALSE(m.graph.FindTensor("c"));
  ASSERT_TRUE(CheckWeights(m.graph, m.weights).ok());
  const auto after = RunRef(m, x);
  ASSERT_EQ(after.size(), 1u);
  EXPECT_LE(MaxRelDiff(after[0], before[0]), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(ConvBias, FuseBatchNormTest, ::testing::Bool());

TEST(FuseBatchNorm, KeepsBnWhenTheConvOutputHasAnotherReader) {
  Model m = ConvBn(true, true);
  auto fused = FuseBatchNorm(&m);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 0);
  EXPECT_EQ(m.graph.nodes.size(), 4u);
}

TEST(FuseBatchNorm, StructureOnlyWithoutWeights) {
  Model m = ConvBn(false, false);
  m.weights.clear();
  auto fused = FuseBatchNorm(&m);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 1);
  ASSERT_TRUE(VerifyGraph(m.graph).ok());
  EXPECT_EQ(m.graph.FindTensor("conv.bias")->shape, Shape{5});
  EXPECT_TRUE(m.weights.empty());
}

// Two convs share one weight: each fused conv needs its own copy.
TEST(FuseBatchNorm, SharedConvWeightIsCopied) {
  Model m;
  Graph& g = m.graph;
  g.name = "shared";
  ASSERT_TRUE(g.AddInput("x", {1, 2, 5, 5}).ok());
  ASSERT_TRUE(g.AddWeight("w", {2, 2, 1, 1}).ok());
  for (const char* p : {"a", "b"}) {
    std::string s = p;
    for (const char* q : {".scale", ".b", ".mean", ".var"})
      ASSERT_TRUE(g.AddWeight(s + q, {2}).ok());
    ASSERT_TRUE(
        g.AddNode({s + "conv", "Conv", {"x", "w"}, {s + "c"}, {}}).ok());
    ASSERT_TRUE(
        g.AddNode({s + "bn",
                   "BatchNormalization",
                   {s + "c", s + ".scale", s + ".b", s + ".mean", s + ".var"},
                   {s + "y"},
                   {}})
            .ok());
  }
  ASSERT_TRUE(g.AddNode({"sum", "Add", {"ay", "by"}, {"out"}, {}}).ok());
  g.outputs = {"out"};
  ASSERT_TRUE(InferShapes(&g).ok());
  m.weights = RandomWeights(g, 9);
  const Tensor x = RandomInput({1, 2, 5, 5}, 4);
  const auto before = RunRef(m, x);
  auto fused = FuseBatchNorm(&m);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 2);
  ASSERT_TRUE(VerifyGraph(m.graph).ok());
  EXPECT_NE(m.graph.nodes[0].inputs[1], m.graph.nodes[1].inputs[1]);
  EXPECT_LE(MaxRelDiff(RunRef(m, x)[0], before[0]), 1e-5);
}

// resnet18 from the zoo: all 20 BNs follow a conv.
TEST(FuseBatchNorm, ResNet18FusesEveryBn) {
  const ZooEntry* e = Zoo::Global().Find("resnet18");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  Model m;
  m.graph = *g;
  auto fused = FuseBatchNorm(&m);
  ASSERT_TRUE(fused.ok());
  EXPECT_EQ(*fused, 20);
  for (const auto& n : m.graph.nodes) EXPECT_NE(n.op, "BatchNormalization");
  EXPECT_TRUE(VerifyGraph(m.graph).ok());
}

}  // namespace
}  // namespace shoal
