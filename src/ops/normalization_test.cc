// BatchNormalization (inference) and LRN. BN's running mean and variance are
// stored weights but not learned parameters: torchvision's parameter counts
// (which the zoo golden tests match) leave them out.
#include <gtest/gtest.h>

#include "graph/op_registry.h"
#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::Ints;
using op_test::MakeAttrs;
using op_test::RunOneNode;
using op_test::Wt;

std::vector<op_test::In> BnInputs(const Shape& x, int64_t c) {
  return {Act("x", x), Wt("scale", {c}), Wt("bias", {c}), Wt("mean", {c}),
          Wt("var", {c})};
}

TEST(BatchNormTest, ShapeAndParamsExcludeStatistics) {
  auto r = RunOneNode("BatchNormalization", BnInputs({1, 64, 56, 56}, 64),
                      MakeAttrs({{"epsilon", 1e-5f}, {"momentum", 0.9f}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 64, 56, 56}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 2 * 64);           // scale + bias
  EXPECT_EQ(c.weight_elements, 4 * 64);  // + mean + var
  EXPECT_EQ(c.macs, 0);
  EXPECT_EQ(c.input_elements, 64 * 56 * 56);
  EXPECT_EQ(c.output_elements, 64 * 56 * 56);
}

TEST(BatchNormTest, SchemaMarksOnlyMeanAndVarAsNonParams) {
  const OpSchema* bn = OpRegistry::Global().Find("BatchNormalization");
  ASSERT_NE(bn, nullptr);
  EXPECT_TRUE(bn->IsParamInput(1));
  EXPECT_TRUE(bn->IsParamInput(2));
  EXPECT_FALSE(bn->IsParamInput(3));
  EXPECT_FALSE(bn->IsParamInput(4));
}

TEST(BatchNormTest, EachChannelReadsItsOwnEntryOfTheWeights) {
  Node bn;
  bn.op = "BatchNormalization";
  EXPECT_TRUE(ActsPerChannelWithWeights(bn));
  bn.op = "Conv";
  EXPECT_FALSE(ActsPerChannelWithWeights(bn));
  bn.op = "Relu";  // per channel, but without weights
  EXPECT_FALSE(ActsPerChannelWithWeights(bn));
}

TEST(BatchNormTest, WorksOnFeaturesAnd3D) {
  auto fc = RunOneNode("BatchNormalization", BnInputs({1, 128}, 128));
  ASSERT_TRUE(fc.Ok());
  EXPECT_EQ(fc.out(), (Shape{1, 128}));
  auto vol = RunOneNode("BatchNormalization", BnInputs({1, 8, 4, 5, 6}, 8));
  ASSERT_TRUE(vol.Ok());
  EXPECT_EQ(vol.out(), (Shape{1, 8, 4, 5, 6}));
  EXPECT_EQ(vol.cost().params, 16);
}

TEST(BatchNormTest, RejectsParameterOfWrongSize) {
  auto r = RunOneNode("BatchNormalization", BnInputs({1, 64, 8, 8}, 32), {}, 1,
                      "bn_size");
  EXPECT_TRUE(r.FailsNamingNode());
  // Only the variance is wrong.
  auto v = RunOneNode("BatchNormalization",
                      {Act("x", {1, 4, 2, 2}), Wt("s", {4}), Wt("b", {4}),
                       Wt("m", {4}), Wt("v", {1, 4})},
                      {}, 1, "bn_var");
  EXPECT_TRUE(v.FailsNamingNode());
}

TEST(BatchNormTest, RejectsInputWithoutChannels) {
  auto r = RunOneNode("BatchNormalization", BnInputs({8}, 8), {}, 1, "bn_rank");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(BatchNormTest, RejectsMissingStatistics) {
  auto r = RunOneNode("BatchNormalization",
                      {Act("x", {1, 4, 2, 2}), Wt("s", {4}), Wt("b", {4})}, {},
                      1, "bn_three");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(BatchNormTest, RejectsTrainingModeAsUnsupported) {
  auto r = RunOneNode("BatchNormalization", BnInputs({1, 4, 2, 2}, 4),
                      MakeAttrs({{"training_mode", 1}}), 1, "bn_train");
  EXPECT_TRUE(r.FailsNamingNode());
  EXPECT_EQ(r.infer.code(), Code::kUnsupported);
}

TEST(BatchNormTest, GraphCostCountsStatisticsAsWeightsOnly) {
  auto r = RunOneNode("BatchNormalization", BnInputs({1, 10, 3, 3}, 10));
  ASSERT_TRUE(r.Ok());
  auto total = ComputeGraphCost(r.graph);
  ASSERT_TRUE(total.ok());
  EXPECT_EQ(total->params, 20);
  EXPECT_EQ(total->weight_elements, 40);
  EXPECT_EQ(total->weight_bytes(), 160);
}

TEST(LrnTest, AlexNetLrn) {
  auto r = RunOneNode(
      "LRN", {Act("x", {1, 96, 55, 55})},
      MakeAttrs(
          {{"size", 5}, {"alpha", 1e-4f}, {"beta", 0.75f}, {"bias", 2.f}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 96, 55, 55}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 0);
  EXPECT_EQ(c.macs, 0);
  EXPECT_EQ(c.output_elements, 96 * 55 * 55);
}

TEST(LrnTest, RejectsMissingOrZeroSize) {
  auto missing =
      RunOneNode("LRN", {Act("x", {1, 8, 4, 4})}, {}, 1, "lrn_nosize");
  EXPECT_TRUE(missing.FailsNamingNode());
  auto zero = RunOneNode("LRN", {Act("x", {1, 8, 4, 4})},
                         MakeAttrs({{"size", 0}}), 1, "lrn_zero");
  EXPECT_TRUE(zero.FailsNamingNode());
}

TEST(LrnTest, RejectsInputWithoutSpatialAxes) {
  auto r = RunOneNode("LRN", {Act("x", {1, 8})}, MakeAttrs({{"size", 3}}), 1,
                      "lrn_flat");
  EXPECT_TRUE(r.FailsNamingNode());
}

}  // namespace
}  // namespace shoal
