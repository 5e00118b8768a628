// `--strategy lcp`: each branch whole on a device, the run equal to the
// branched model on one device.
#include <gtest/gtest.h>

#include <set>

#include "graph/fuse_batchnorm.h"
#include "lcp/split_branches.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "partition/plan_test_util.h"

namespace shoal {
namespace {

using testing::EqualDevices;
using testing::RunPlanExact;

Model Branched(const std::string& name, int64_t k, const Shape& in = {}) {
  LoadOptions lo;
  if (!in.empty()) lo.input_shape = in;
  Model m;
  m.graph =
      SplitIntoBranches(LoadModel(name, lo).value().graph, {k, 0}).value();
  m.weights = RandomWeights(m.graph, 5);
  EXPECT_TRUE(FuseBatchNorm(&m).ok());
  return m;
}

// Devices running nodes of branch k in plan p.
std::set<int> DevicesOf(const Plan& p, int k) {
  std::set<int> out;
  const std::string prefix = BranchPrefix(k);
  for (const auto& t : p.tasks)
    for (const auto& n : t.fragment.nodes)
      if (n.name.rfind(prefix, 0) == 0)
        out.insert(t.devices.begin(), t.devices.end());
  return out;
}

TEST(LcpStrategy, EqualsTheBranchedModelOnOneDevice) {
  const Model m = Branched("lenet5", 4);
  for (int n : {1, 2, 3, 4, 5, 8}) {
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, "lcp", EqualDevices(n), &r)) << n;
    for (int k = 0; k < 4; ++k) EXPECT_EQ(DevicesOf(r.plan, k).size(), 1u);
  }
}

// One branch per device, and the classifier's fc split by input features
// along the branches: each device multiplies its own branch's activations
// where they are, and only the partial sums travel.
TEST(LcpStrategy, OneBranchPerDeviceAndTheClassifierAlongThem) {
  const Model m = Branched("lenet5", 4);
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "lcp", EqualDevices(5), &r));
  std::set<int> used;
  for (int k = 0; k < 4; ++k) used.insert(*DevicesOf(r.plan, k).begin());
  EXPECT_EQ(used, (std::set<int>{1, 2, 3, 4}));  // the hub, 0, has none
  std::set<int> classifier;
  for (const auto& t : r.plan.tasks) {
    if (t.scheme == "lcp" && t.name.find("/lip@") != std::string::npos) {
      classifier.insert(t.devices.begin(), t.devices.end());
    }
  }
  EXPECT_EQ(classifier, used);
  // The input to 4 devices, and 4 partial sums of the 10 outputs back
  // (not 4 pre-final activations of 21 features).
  EXPECT_EQ(r.stats.elements_total, 4 * 28 * 28 + 4 * 10);
  // Fewer devices: two branches each, and the classifier on the hub.
  ASSERT_TRUE(RunPlanExact(m, "lcp", EqualDevices(2), &r));
  EXPECT_EQ(DevicesOf(r.plan, 0), DevicesOf(r.plan, 2));
  EXPECT_NE(DevicesOf(r.plan, 0), DevicesOf(r.plan, 1));
  EXPECT_NE(r.plan.decisions.back().reason.find("on the hub"),
            std::string::npos)
      << r.plan.decisions.back().reason;
  EXPECT_EQ(r.stats.elements_total, 28 * 28 + 2 * 21);
}

// The hub's own branch is a task of its own, which waits for the input
// only: it runs while the other branches compute, not after their
// activations arrive (then the concat and classifier, in a second task).
TEST(LcpStrategy, HubBranchRunsBeforeTheOthersArrive) {
  const Model m = Branched("lenet5", 4);
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "lcp", EqualDevices(4), &r));
  int hub_branch = -1;
  for (const auto& t : r.plan.tasks) {
    for (const auto& n : t.fragment.nodes) {
      if (n.name.rfind(BranchPrefix(3), 0) == 0) hub_branch = t.id;
    }
  }
  ASSERT_GE(hub_branch, 0);
  const Task& t = r.plan.tasks[hub_branch];
  EXPECT_EQ(t.devices, std::vector<int>{0});
  EXPECT_EQ(t.fragment.inputs, std::vector<std::string>{r.plan.input_name});
  for (const auto& n : t.fragment.nodes) {
    EXPECT_EQ(n.name.rfind(BranchPrefix(3), 0), 0u) << n.name;
  }
}

TEST(LcpStrategy, ResidualAndDepthwiseModels) {
  EXPECT_TRUE(RunPlanExact(Branched("resnet18", 4, {1, 3, 64, 64}), "lcp",
                           EqualDevices(3)));
  EXPECT_TRUE(RunPlanExact(Branched("mobilenet-v2", 2, {1, 3, 64, 64}), "lcp",
                           EqualDevices(2)));
}

TEST(LcpStrategy, UnbranchedModelIsOneBranch) {
  LoadOptions lo;
  lo.with_weights = true;
  const Model m = LoadModel("lenet-fc", lo).value();
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "lcp", EqualDevices(2), &r));
  EXPECT_NE(r.plan.decisions.back().reason.find("no b<k>/ branches"),
            std::string::npos);
}

// Unequal branches (as the cluster Splitter sizes them for unequal
// devices): the widest goes to the fastest device, and the run is exact.
TEST(LcpStrategy, UnequalBranchesLargestOnTheFastest) {
  Model m;
  m.graph = SplitIntoBranches(LoadModel("lenet5", LoadOptions{}).value().graph,
                              {3, 0, {1, 3, 1}})
                .value();
  m.weights = RandomWeights(m.graph, 5);
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "lcp", testing::Devices({1, 1, 3, 1}), &r));
  EXPECT_EQ(DevicesOf(r.plan, 1), (std::set<int>{2})) << "branch 1 is widest";
  EXPECT_EQ(DevicesOf(r.plan, 0).size(), 1u);
  EXPECT_EQ(DevicesOf(r.plan, 2).size(), 1u);
  EXPECT_FALSE(DevicesOf(r.plan, 0).count(2));
}

}  // namespace
}  // namespace shoal
