// The engine's differential tests: the oneDNN backend against the reference
// backend on small graphs, and the engine's error paths.
#include "engine/executor.h"

#include <gtest/gtest.h>

#include "graph/cost.h"
#include "graph/shape_inference.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

TEST(ExecutorTest, SmallConvNetBackendsAgree) {
  GraphBuilder b("small");
  auto x = b.Input("x", {1, 3, 12, 12});
  auto c = b.Relu(b.BatchNorm("bn1", b.Conv("c1", x, 8, 3, 1, 1)));
  auto d = b.Conv("c2", c, 8, 3, 2, 1, 8);  // depthwise, strided
  auto e = b.Add(b.Conv("c3", c, 8, 1, 2, 0), d);
  auto p = b.MaxPool(b.Relu(e), {2}, {2}, {0}, true);
  auto f = b.Linear("fc", b.Flatten(p), 5);
  auto g = b.Finish({b.Softmax(f)});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ExpectBackendsAgree(*g, 3);
}

int64_t WeightBytes(const WeightStore& w) {
  int64_t n = 0;
  for (const auto& [name, t] : w) n += t.size() * sizeof(float);
  return n;
}

TEST(ExecutorTest, OneDnnHoldsNoPlainWeightsAndFoldsBatchNorm) {
  const ZooEntry* e = Zoo::Global().Find("resnet18");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  int bns = 0;
  for (const auto& n : g->nodes) bns += n.op == "BatchNormalization";
  ASSERT_GT(bns, 0);
  auto ex = Executor::Create(*g, RandomWeights(*g, 1), {});
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  // Every weight lives once, in the layout its primitive chose.
  EXPECT_EQ((*ex)->stats().retained_weight_bytes, 0);
  EXPECT_EQ((*ex)->stats().reference_steps, 0);
  // Every BN of ResNet-18 follows a conv that nothing else reads.
  EXPECT_EQ((*ex)->stats().folded_batchnorms, bns);
  for (const auto& label : (*ex)->step_labels())
    EXPECT_EQ(label.find("bn"), std::string::npos) << label;
}

TEST(ExecutorTest, ReferenceBackendKeepsBatchNormAndItsWeights) {
  const ZooEntry* e = Zoo::Global().Find("resnet18");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  WeightStore w = RandomWeights(*g, 1);
  const int64_t bytes = WeightBytes(w);
  ExecutorOptions o;
  o.backend = Backend::kReference;
  auto ex = Executor::Create(*g, std::move(w), o);
  ASSERT_TRUE(ex.ok());
  EXPECT_EQ((*ex)->stats().folded_batchnorms, 0);
  EXPECT_EQ((*ex)->stats().retained_weight_bytes, bytes);
}

// A weight only a reference kernel reads (Where has no oneDNN step) stays;
// the conv's weight, copied by oneDNN, goes.
TEST(ExecutorTest, OneDnnRetainsOnlyWeightsReferenceStepsRead) {
  Graph g;
  g.name = "mixed";
  ASSERT_TRUE(g.AddInput("x", {1, 3, 8, 8}).ok());
  ASSERT_TRUE(g.AddWeight("c.w", {4, 3, 3, 3}).ok());
  ASSERT_TRUE(g.AddWeight("m.w", {6, 6}).ok());
  ASSERT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"y"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"m", "Where", {"m.w", "y", "y"}, {"z"}, {}}).ok());
  g.outputs = {"z"};
  Status s = InferShapes(&g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExecutorStats st;
  ExpectBackendsAgree(g, 4);
  RunWith(g, RandomWeights(g, 4), Backend::kOneDnn,
          {RandomInput({1, 3, 8, 8}, 4)}, &st);
  EXPECT_EQ(st.retained_weight_bytes, 6 * 6 * 4);
  EXPECT_EQ(st.reference_steps, 1);
}

TEST(ExecutorTest, ArenaFollowsPredictedPeak) {
  const ZooEntry* e = Zoo::Global().Find("resnet18");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto cost = ComputeGraphCost(*g);
  ASSERT_TRUE(cost.ok());
  ExecutorOptions o;
  o.backend = Backend::kReference;
  auto ex = Executor::Create(*g, RandomWeights(*g, 1), o);
  ASSERT_TRUE(ex.ok());
  // The reference backend keeps every tensor plain, one buffer per node
  // output, so its live peak is exactly what the cost model predicts.
  EXPECT_EQ((*ex)->stats().peak_live_bytes, cost->peak_activation_bytes);
  EXPECT_GE((*ex)->stats().arena_bytes, cost->peak_activation_bytes);
}

TEST(ExecutorTest, WrongInputShapeIsAnError) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto ex = Executor::Create(*g, RandomWeights(*g, 1), {});
  ASSERT_TRUE(ex.ok());
  std::vector<Tensor> out;
  Status s = (*ex)->Run({Tensor({1, 1, 32, 32})}, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("1x1x28x28"), std::string::npos) << s.message();
}

TEST(ExecutorTest, MissingWeightsAreAnError) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto ex = Executor::Create(*g, WeightStore{}, {});
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.status().message().find("conv1"), std::string::npos);
}

}  // namespace
}  // namespace shoal
