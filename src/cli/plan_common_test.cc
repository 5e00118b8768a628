// LoadPlanModel with LCP branching on load (`shoal plan --branches K`): the
// plan records it, any process rebuilds the same branched model as `shoal
// lcp split -o` writes, and the lcp plan runs equal to that model whole.
#include "cli/plan_common.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>

#include "engine/run_whole.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "lcp/split_branches.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "onnx/onnx_export.h"
#include "partition/plan_test_util.h"
#include "plan/plan_json.h"
#include "runtime/local_runner.h"

namespace shoal {
namespace {

TEST(LoadPlanModel, BranchesOnLoadLikeLcpSplitWrites) {
  ModelRef ref;
  ref.spec = "resnet18";
  ref.input_shape = {1, 3, 32, 32};
  ref.weights_seed = 5;
  ref.lcp_branches = 2;
  auto got = LoadPlanModel(ref, true);
  ASSERT_TRUE(got.ok()) << got.status().message();
  // What `shoal lcp split resnet18 --branches 2 --weights-seed 5 -o F` writes,
  // loaded the way a plan of F.onnx loads it.
  LoadOptions lo;
  lo.input_shape = ref.input_shape;
  auto base = LoadModel("resnet18", lo);
  ASSERT_TRUE(base.ok());
  auto split = SplitIntoBranches(base->graph, {2, 0});
  ASSERT_TRUE(split.ok());
  const std::string path =
      ::testing::TempDir() + "/split2-" + std::to_string(getpid()) + ".onnx";
  ASSERT_TRUE(ExportOnnx(Model{*split, RandomWeights(*split, 5)}, path).ok());
  ModelRef file_ref;
  file_ref.spec = path;
  auto want = LoadPlanModel(file_ref, true);
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_EQ(got->graph.nodes.size(), want->graph.nodes.size());
  for (size_t i = 0; i < got->graph.nodes.size(); ++i) {
    EXPECT_EQ(got->graph.nodes[i].name, want->graph.nodes[i].name);
  }
  ASSERT_EQ(got->weights.size(), want->weights.size());
  for (const auto& [name, t] : want->weights) {
    ASSERT_TRUE(got->weights.count(name)) << name;
    const Tensor& g = got->weights.at(name);
    ASSERT_EQ(g.shape, t.shape) << name;
    for (size_t k = 0; k < t.data.size(); ++k) {
      ASSERT_NEAR(g.data[k], t.data[k], 1e-5f * (1 + std::fabs(t.data[k])))
          << name;
    }
  }
}

TEST(LoadPlanModel, LcpPlanRecordsBranchesAndRunsEqualToTheBranchedModel) {
  ModelRef ref;
  ref.spec = "lenet5";
  ref.lcp_branches = 3;
  ref.lcp_fatten_pct = 20;
  auto m = LoadPlanModel(ref, true);
  ASSERT_TRUE(m.ok()) << m.status().message();
  PlanOptions po;
  po.strategy = "lcp";
  po.devices = testing::EqualDevices(4);
  po.model = ref;
  auto p = MakePlan(m->graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto back = PlanFromJson(PlanToJson(*p));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->model.lcp_branches, 3);
  EXPECT_DOUBLE_EQ(back->model.lcp_fatten_pct, 20);
  // The plan alone rebuilds the model (as `shoal run` does).
  auto again = LoadPlanModel(back->model, true);
  ASSERT_TRUE(again.ok());
  auto runner = LocalRunner::Create(*back, again->weights, {});
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  const Tensor x = RandomInput(back->input_shape, 3);
  Tensor got;
  ASSERT_TRUE(runner.value()->Run(x, &got, nullptr).ok());
  auto want = RunWhole(*m, x);
  ASSERT_TRUE(want.ok()) << want.status().message();
  ASSERT_EQ(got.shape, want->shape);
  EXPECT_LE(MaxRelDiff(got, *want), 1e-4);
}

TEST(LoadPlanModel, PlansWithoutBranchingLoadAsBefore) {
  ModelRef ref;
  ref.spec = "lenet5";
  Plan p;
  p.model = ref;
  auto j = PlanToJson(p);
  EXPECT_FALSE(j["model"].contains("lcp_branches"));
  j["model"]["lcp_branches"] = -2;
  EXPECT_FALSE(PlanFromJson(j).ok());
}

TEST(LoadPlanModel, TooManyBranchesNamesTheNumbers) {
  ModelRef ref;
  ref.spec = "lenet5";
  ref.lcp_branches = 1000;
  auto m = LoadPlanModel(ref, false);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("1000"), std::string::npos)
      << m.status().message();
}

}  // namespace
}  // namespace shoal
