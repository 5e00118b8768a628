#include "engine/op_profile.h"

#include <gtest/gtest.h>

#include "engine/executor.h"
#include "graph/random_input.h"
#include "graph/shape_inference.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// Conv with a fused Relu, then Where (reference only): the profile names
// both ops, says which kernel ran each, and its steps add up.
TEST(OpProfileTest, GroupsStepsByOpAndKernel) {
  Graph g;
  g.name = "mixed";
  ASSERT_TRUE(g.AddInput("x", {1, 3, 16, 16}).ok());
  ASSERT_TRUE(g.AddWeight("c.w", {8, 3, 3, 3}).ok());
  ASSERT_TRUE(g.AddWeight("m.w", {14, 14}).ok());
  ASSERT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"y"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"r", "Relu", {"y"}, {"yr"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"m", "Where", {"m.w", "yr", "yr"}, {"z"}, {}}).ok());
  g.outputs = {"z"};
  ASSERT_TRUE(InferShapes(&g).ok());
  auto ex = Executor::Create(g, RandomWeights(g, 1), {});
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  std::vector<Tensor> out;
  std::vector<double> seconds;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE((*ex)
                    ->Run({RandomInput({1, 3, 16, 16}, 1)}, &out, &seconds,
                          Executor::StepClock::kWall)
                    .ok());
  }
  const auto& labels = (*ex)->step_labels();
  ASSERT_EQ(seconds.size(), labels.size());
  OpProfile p = ProfileByOp(g, labels, (*ex)->step_kernels(), seconds, 3);
  bool conv = false, where = false, reorder = false;
  double sum = 0;
  for (const auto& r : p.ops) {
    sum += r.seconds;
    if (r.op == "Conv+Relu") conv = !r.reference && r.steps == 1;
    if (r.op == "Where") where = r.reference && r.steps == 1;
    if (r.op == "reorder") reorder = !r.reference;
    EXPECT_NE(r.op, "?");
    EXPECT_GE(r.seconds, 0);
  }
  EXPECT_TRUE(conv);
  EXPECT_TRUE(where);
  // The conv's blocked output goes plain for the reference kernel.
  EXPECT_TRUE(reorder);
  EXPECT_NEAR(sum, p.total_seconds, 1e-12);
  double total = 0;
  for (double s : seconds) total += s;
  EXPECT_NEAR(p.total_seconds, total / 3, 1e-12);
  ASSERT_EQ(p.steps.size(), labels.size());
  for (size_t i = 1; i < p.steps.size(); ++i)
    EXPECT_GE(p.steps[i - 1].seconds, p.steps[i].seconds);
  const std::string text = OpProfileText(p, 2);
  EXPECT_NE(text.find("Conv+Relu"), std::string::npos) << text;
  EXPECT_NE(text.find("reference"), std::string::npos) << text;
  EXPECT_NE(text.find("slowest 2 steps"), std::string::npos) << text;
}

}  // namespace
}  // namespace shoal
