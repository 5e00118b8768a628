#include "sim/profile_variants.h"

#include <gtest/gtest.h>

#include "models/load_model.h"

namespace shoal {
namespace {

TEST(ProfileVariants, EveryLayerWholeAndConvFcSplits) {
  LoadOptions lo;
  auto m = LoadModel("alexnet", lo);
  ASSERT_TRUE(m.ok());
  auto v = ProfileVariants(m->graph);
  ASSERT_TRUE(v.ok()) << v.status().message();
  std::map<std::string, std::vector<const LayerVariant*>> by_layer;
  for (const auto& x : *v) by_layer[x.layer].push_back(&x);
  const auto& conv2 = by_layer.at("features.3");
  ASSERT_EQ(conv2.size(), 6u);  // whole, lop 1/2 1/4 1/8, rows 1/2 1/4
  EXPECT_EQ(conv2[0]->variant, "whole");
  const int64_t whole = conv2[0]->cost.macs;
  EXPECT_EQ(conv2[2]->variant, "lop 1/4");
  EXPECT_EQ(conv2[2]->cost.macs * 4, whole);
  EXPECT_EQ(conv2[4]->variant, "rows 1/2");
  EXPECT_LT(conv2[4]->cost.macs, whole);
  EXPECT_GT(conv2[4]->cost.macs * 3, whole);
  // fc layers split by output features.
  int64_t fc_whole = 0, fc_half = 0;
  for (const auto& x : *v) {
    if (x.cost.op != "Gemm") continue;
    if (x.variant == "whole" && fc_whole == 0) fc_whole = x.cost.macs;
    if (x.variant == "lop 1/2" && fc_half == 0) fc_half = x.cost.macs;
  }
  EXPECT_EQ(fc_half * 2, fc_whole);
  for (const auto& x : *v) {
    EXPECT_EQ(x.fragment.nodes.size(), 1u);
  }
}

TEST(ProfileVariants, RepeatedLayersAreMeasuredOnce) {
  LoadOptions lo;
  auto m = LoadModel("vgg16", lo);
  ASSERT_TRUE(m.ok());
  auto v = ProfileVariants(m->graph);
  ASSERT_TRUE(v.ok()) << v.status().message();
  int conv_whole = 0;
  for (const auto& x : *v)
    conv_whole += x.cost.op == "Conv" && x.variant == "whole";
  EXPECT_LT(conv_whole, 13);  // conv3_2 == conv3_3, ...
  EXPECT_GT(conv_whole, 5);
}

}  // namespace
}  // namespace shoal
