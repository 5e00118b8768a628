#include "lcp/splitter.h"

#include <gtest/gtest.h>

#include "models/zoo.h"

namespace shoal {
namespace {

Graph Zoo(const std::string& name) {
  const ZooEntry* e = Zoo::Global().Find(name);
  return e->build(e->input_shape).value();
}

TEST(SplitterTest, DividesUntilOneBranchFits) {
  const Graph g = Zoo("resnet18");
  // 1 GB and the whole model's MACs: the original fits.
  auto r = RunSplitter(g, {int64_t{1} << 30, int64_t{1} << 40, 2, 0});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->summary.branches, 1);
  // A MAC budget only an eighth-width branch meets.
  auto s8 = RunSplitter(g, {int64_t{1} << 30, 60'000'000, 2, 0});
  ASSERT_TRUE(s8.ok()) << s8.status().ToString();
  EXPECT_EQ(s8->summary.branches, 8);
  EXPECT_EQ(s8->steps.size(), 4u);
  EXPECT_LE(s8->summary.macs_per_branch, 60'000'000);
  // Division factor 4 jumps from 4 to 16.
  auto s16 = RunSplitter(g, {int64_t{1} << 30, 60'000'000, 4, 0});
  ASSERT_TRUE(s16.ok());
  EXPECT_EQ(s16->summary.branches, 16);
}

TEST(SplitterTest, ImpossibleBudgetErrorsWithNumbers) {
  auto r = RunSplitter(Zoo("lenet5"), {100, 100, 2, 0});
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().ToString();
  EXPECT_NE(m.find("no branch count meets the budget of 100 B"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("K=64"), std::string::npos) << m;
  EXPECT_FALSE(RunSplitter(Zoo("lenet5"), {100, 100, 1, 0}).ok());
}

ClusterSplitOptions Rates(double target_ms = 0) {
  ClusterSplitOptions o;
  o.target_ms = target_ms;
  o.macs_per_second = 1.65e9;
  o.weight_bytes_per_second = 1.2e9;
  return o;
}

TEST(ClusterSplitterTest, OneBranchPerDeviceWidthsFollowSpeed) {
  const Graph g = Zoo("alexnet");
  // Four devices, one twice as fast; 1 GiB each.
  std::vector<SplitDevice> d = {{"slow0", 1, int64_t{1} << 30},
                                {"fast", 2, int64_t{1} << 30},
                                {"slow1", 1, int64_t{1} << 30},
                                {"slow2", 1, int64_t{1} << 30}};
  auto r = RunClusterSplitter(g, d, Rates());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const LcpSummary& s = r->split.summary;
  EXPECT_EQ(s.branches, 4) << "the most that fit";
  ASSERT_EQ(r->devices.size(), 4u);
  EXPECT_EQ(r->devices[0], "fast") << "fastest first";
  ASSERT_EQ(s.shares.size(), 4u);
  EXPECT_GT(s.shares[0], 1.2 * s.shares[1]) << "wider for the fast one";
  EXPECT_EQ(s.shares[1], s.shares[2]);
  // The fast device's branch has about twice the others' work, and is
  // predicted about as fast.
  EXPECT_GT(s.branch_macs[0], 1.6 * s.branch_macs[1]);
  EXPECT_NEAR(r->predicted_ms[0], r->predicted_ms[1],
              0.25 * r->predicted_ms[1]);
  EXPECT_EQ(r->split.steps.size(), 3u);  // K = 1, 2, 4
}

TEST(ClusterSplitterTest, EqualDevicesEqualBranchesATargetTakesTheFewest) {
  const Graph g = Zoo("alexnet");
  std::vector<SplitDevice> d(8, SplitDevice{"pi", 1, int64_t{1} << 30});
  for (int i = 0; i < 8; ++i) d[i].name = "pi" + std::to_string(i);
  auto most = RunClusterSplitter(g, d, Rates());
  ASSERT_TRUE(most.ok()) << most.status().ToString();
  EXPECT_EQ(most->split.summary.branches, 8);
  EXPECT_TRUE(most->split.summary.shares.empty()) << "equal branches";
  // A target the 2-branch split meets but the whole model does not.
  auto one = RunClusterSplitter(g, {d[0]}, Rates());
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->split.summary.branches, 1);
  const double whole = one->predicted_ms[0];
  EXPECT_EQ(RunClusterSplitter(g, d, Rates(whole * 2))->split.summary.branches,
            1)
      << "a target the whole model meets";
  auto fewest = RunClusterSplitter(g, d, Rates(whole * 0.6));
  ASSERT_TRUE(fewest.ok()) << fewest.status().ToString();
  EXPECT_EQ(fewest->split.summary.branches, 2);
  EXPECT_LE(fewest->predicted_ms[0], whole * 0.6);
}

TEST(ClusterSplitterTest, NoFitSaysEveryStep) {
  // 2 MiB devices: no AlexNet branch fits.
  std::vector<SplitDevice> d = {{"a", 1, 2 << 20}, {"b", 1, 2 << 20}};
  auto r = RunClusterSplitter(Zoo("alexnet"), d, Rates());
  ASSERT_FALSE(r.ok());
  const std::string m = r.status().message();
  EXPECT_NE(m.find("no branch count fits the cluster's 2 devices"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("K=2: a "), std::string::npos) << m;
  EXPECT_NE(m.find("(over 2)"), std::string::npos) << m;
  EXPECT_FALSE(RunClusterSplitter(Zoo("alexnet"), {}, Rates()).ok());
}

}  // namespace
}  // namespace shoal
