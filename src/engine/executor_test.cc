// The engine's differential tests: the oneDNN backend against the reference
// backend on small graphs, and the engine's error paths.
#include "engine/executor.h"

#include <gtest/gtest.h>

#include "engine/backend_compare.h"
#include "graph/cost.h"
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

TEST(ExecutorTest, SmallConvNetBackendsAgree) {
  GraphBuilder b("small");
  auto x = b.Input("x", {1, 3, 12, 12});
  auto c = b.Relu(b.Conv("c1", x, 8, 3, 1, 1));
  auto d = b.Conv("c2", c, 8, 3, 2, 1, 8);  // depthwise, strided
  auto e = b.Add(b.Conv("c3", c, 8, 1, 2, 0), d);
  auto p = b.MaxPool(b.Relu(e), {2}, {2}, {0}, true);
  auto f = b.Linear("fc", b.Flatten(p), 5);
  auto g = b.Finish({b.Softmax(f)});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ExpectBackendsAgree(*g, 3);
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
