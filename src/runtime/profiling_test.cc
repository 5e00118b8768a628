// Per-node timing inside a graph (what `shoal profile` measures in
// context): how step times are attributed to nodes, and that TimeGraph's
// per-node times cover the run.
#include "runtime/profiling.h"

#include <gtest/gtest.h>

#include "models/builder.h"

namespace shoal {
namespace {

Graph ConvReluPool() {
  GraphBuilder b("crp");
  std::string x = b.Input("x", {1, 8, 32, 32});
  x = b.Relu(b.Conv("conv", x, 16, 3, 1, 1));
  x = b.MaxPool(x, {2, 2}, {2, 2});
  return b.Finish({x}).value();
}

TEST(Profiling, ReordersGoToTheNodeTheyFeedAndTimesAreScaled) {
  const Graph g = ConvReluPool();
  std::vector<std::string> names;
  for (const auto& n : g.nodes) names.push_back(n.name);
  ASSERT_EQ(names.size(), 3u);
  // reorder in, conv (relu fused), pool, reorder out.
  const std::vector<std::string> labels = {"reorder x", names[0] + "+Relu",
                                           names[2], "reorder out"};
  const std::vector<double> secs = {1, 4, 2, 3};
  const auto t = AttributeSteps(g, labels, secs, 20.0);  // 2x the steps
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].node, names[0]);
  EXPECT_DOUBLE_EQ(t[0].seconds, 10.0);  // (1 + 4) * 2
  EXPECT_DOUBLE_EQ(t[1].seconds, 0.0);   // no step of its own
  EXPECT_DOUBLE_EQ(t[2].seconds, 10.0);  // (2 + 3) * 2
}

TEST(Profiling, PerNodeTimesSumToTheRun) {
  const Graph g = ConvReluPool();
  TimingOptions o;
  o.min_runs = 3;
  o.min_seconds = 0;
  o.per_node = true;
  auto t = TimeGraph(g, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->node_seconds.size(), g.nodes.size());
  double sum = 0;
  for (const auto& n : t->node_seconds) sum += n.seconds;
  EXPECT_NEAR(sum, t->seconds_mean, 1e-9 + 1e-6 * t->seconds_mean);
  EXPECT_GT(t->node_seconds[0].seconds, 0);  // the conv
}

TEST(Profiling, MedianRunIsOneOfTheRuns) {
  // The profile takes the median run's CPU and wall time (a slow run does
  // not move them): set, no less than the fastest run, no more than all
  // the runs together.
  const Graph g = ConvReluPool();
  TimingOptions o;
  o.min_runs = 5;
  o.min_seconds = 0;
  auto t = TimeGraph(g, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GE(t->runs, 5);
  EXPECT_GT(t->cpu_seconds_median, 0);
  EXPECT_LE(t->cpu_seconds_median, t->cpu_seconds_mean * t->runs);
  EXPECT_GE(t->seconds_median, t->seconds_min);
  EXPECT_LE(t->seconds_median, t->seconds_mean * t->runs);
}

// An emulated board's run is held to the class's time for the graph and
// reported in board time: on a cluster dilated 2x, a 40 ms hold of host
// time reads at least 20 ms, however fast the host ran the graph.
TEST(Profiling, ABoardsRunTakesItsHeldTimeInBoardTime) {
  const Graph g = ConvReluPool();
  TimingOptions o;
  o.min_runs = 3;
  o.min_seconds = 0;
  o.hold_seconds = 0.04;
  o.dilation = 2;
  auto t = TimeGraph(g, o);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_GE(t->seconds_min, 0.02);
  EXPECT_GE(t->seconds_median, 0.02);
  EXPECT_GE(t->seconds_mean, 0.02 * 0.999);
}

}  // namespace
}  // namespace shoal
