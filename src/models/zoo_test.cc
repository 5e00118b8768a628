// Golden counts for every zoo model: parameters equal the reference
// definition exactly; MACs are conv + fc multiply-accumulates.
#include <gtest/gtest.h>

#include "graph/cost.h"
#include "graph/verify.h"
#include "models/zoo.h"

namespace shoal {
namespace {

struct Golden {
  const char* name;
  int64_t params;
  int64_t macs;
  Shape output;
};

class ZooGoldenTest : public ::testing::TestWithParam<Golden> {};

TEST_P(ZooGoldenTest, CountsAndShapes) {
  const Golden& gd = GetParam();
  const ZooEntry* e = Zoo::Global().Find(gd.name);
  ASSERT_NE(e, nullptr) << gd.name;
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_TRUE(VerifyGraph(*g).ok());
  auto c = ComputeGraphCost(*g);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->params, gd.params);
  EXPECT_EQ(c->macs, gd.macs);
  ASSERT_EQ(g->outputs.size(), 1u);
  EXPECT_EQ(g->FindTensor(g->outputs[0])->shape, gd.output);
  EXPECT_GT(c->peak_activation_bytes, 0);
}

// MACs: computed from the layer shapes (torchvision references: alexnet
// 0.71 GMAC, vgg16 15.47, resnet18 1.81, resnet50 4.09).
INSTANTIATE_TEST_SUITE_P(
    Zoo, ZooGoldenTest,
    ::testing::Values(Golden{"lenet5", 61706, 416520, {1, 10}},
                      Golden{"lenet-fc", 266610, 266200, {1, 10}},
                      Golden{"alexnet", 61100840, 714188480, {1, 1000}},
                      Golden{"vgg16", 138357544, 15470264320, {1, 1000}},
                      Golden{"resnet18", 11689512, 1814073344, {1, 1000}},
                      Golden{"resnet50", 25557032, 4089184256, {1, 1000}}),
    [](const auto& info) {
      std::string n = info.param.name;
      for (auto& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

TEST(ZooTest, EveryModelBuildsAndVerifies) {
  for (const auto& e : Zoo::Global().entries()) {
    auto g = e.build(e.input_shape);
    ASSERT_TRUE(g.ok()) << e.name << ": " << g.status().ToString();
    EXPECT_TRUE(VerifyGraph(*g).ok()) << e.name;
  }
}

TEST(ZooTest, RandomWeightsAreDeterministicAndComplete) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  WeightStore a = RandomWeights(*g, 7), b = RandomWeights(*g, 7), c = RandomWeights(*g, 8);
  EXPECT_TRUE(CheckWeights(*g, a).ok());
  EXPECT_EQ(a.at("conv1.weight").data, b.at("conv1.weight").data);
  EXPECT_NE(a.at("conv1.weight").data, c.at("conv1.weight").data);
}

}  // namespace
}  // namespace shoal
