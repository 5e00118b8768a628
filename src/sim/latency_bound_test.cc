#include "sim/latency_bound.h"

#include <gtest/gtest.h>

#include <cmath>

#include "models/zoo.h"

namespace shoal {
namespace {

Graph Lenet() {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  EXPECT_TRUE(g.ok());
  return *g;
}

TEST(LeastLatency, TwoDevicesShareTheModelAfterALinkLatency) {
  auto c = ParseCluster(R"(devices:
  - {name: a, board: pi3b+}
  - {name: b, board: pi3b+, speed: 3}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const LatencyModel m = LatencyModel::FromCluster(*c);
  const Graph g = Lenet();
  auto one = m.GraphSeconds(0, g);
  ASSERT_TRUE(one.ok());
  auto b = LeastLatency(m, g);
  ASSERT_TRUE(b.ok()) << b.status().message();
  // Rates 1 and 3: together four times one's rate.
  EXPECT_NEAR(b->compute_s, *one / 4, 1e-12);
  EXPECT_EQ(b->fastest_device, 1);
  EXPECT_NEAR(b->one_device_s, *one / 3, 1e-12);
  // LeNet takes far less than the two 9 ms latencies another device's
  // share costs: no plan beats b alone.
  EXPECT_NEAR(b->least_s, *one / 3, 1e-12);
  EXPECT_EQ(b->input_device, 1);
}

// Equal devices, input and output on one of them: T = t/n + (n-1)/n * 2L
// once the others' windows open, which no split of the model beats.
TEST(LeastLatency, EqualDevicesLoseTwoLatenciesEachButTheInputDevice) {
  const double t = 0.160, L = 0.009;
  const std::vector<double> secs(8, t);
  std::vector<double> start(8, L), end(8, L);
  start[0] = end[0] = 0;
  EXPECT_NEAR(LeastSharedTime(secs, start, end), (t + 7 * 2 * L) / 8, 1e-12);
  // Too slow a link for any help: the input device alone.
  std::fill(start.begin() + 1, start.end(), 1.0);
  EXPECT_NEAR(LeastSharedTime(secs, start, end), t, 1e-12);
  // No device with a time: nothing computes the model.
  EXPECT_TRUE(std::isinf(LeastSharedTime({0, 0}, {0, 0}, {0, 0})));
}

// On eight Pi 3B+ over Wi-Fi the bound lies between the compute spread
// over all of them and one board alone, and one board is no more than the
// whole model's time there (no link charged for its own input).
TEST(LeastLatency, EightBoardsOnWifi) {
  std::string yaml = "devices:\n";
  for (int i = 0; i < 8; ++i)
    yaml += "  - {name: p" + std::to_string(i) + ", board: pi3b+}\n";
  auto c = ParseCluster(yaml, "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const LatencyModel m = LatencyModel::FromCluster(*c);
  const ZooEntry* e = Zoo::Global().Find("alexnet");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto one = m.GraphSeconds(0, *g);
  ASSERT_TRUE(one.ok());
  auto b = LeastLatency(m, *g);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_NEAR(b->one_device_s, *one, 1e-12);
  EXPECT_NEAR(b->shared_s, (*one + 7 * 2 * 9e-3) / 8, 1e-9);
  EXPECT_NEAR(b->least_s, std::max(b->shared_s, b->chain_s), 1e-12);
  EXPECT_GT(b->least_s, b->compute_s);
  EXPECT_NEAR(b->input_latency_s, 9e-3, 1e-12);
}

// A chain of layers on equal boards: each layer pays its step once on the
// chain and shares its arithmetic over all boards; a chain that leaves its
// board pays one message. AlexNet is one chain, so the chain is every
// layer: all of them but its views pay a step.
TEST(LeastLatency, TheChainPaysEveryLayersStepInTurn) {
  std::string yaml = "devices:\n";
  for (int i = 0; i < 4; ++i)
    yaml += "  - {name: p" + std::to_string(i) + ", board: pi4b}\n";
  auto c = ParseCluster(yaml, "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const LatencyModel m = LatencyModel::FromCluster(*c);
  const ZooEntry* e = Zoo::Global().Find("alexnet");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  const double step = FindBoard("pi4b")->rates.step_s;
  double fixed = 0, work = 0;
  int steps = 0;
  for (const auto& node : g->nodes) {
    auto cost = ComputeNodeCost(*g, node);
    ASSERT_TRUE(cost.ok());
    NodeCost none;
    none.op = cost->op;
    none.mac_kind = cost->mac_kind;
    const double f = m.NodeSeconds(0, none);
    EXPECT_TRUE(f == 0 || std::abs(f - step) < 1e-15) << node.name;
    if (f > 0) ++steps;
    fixed += f;
    work += m.NodeSeconds(0, *cost) - f;
  }
  auto b = LeastLatency(m, *g);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->chain_steps, steps);
  EXPECT_GE(steps, 11);  // 5 convs, 3 pools, 3 fully connected layers
  EXPECT_NEAR(b->chain_fixed_s, fixed, 1e-12);
  // A message is a link latency and a send's and a receive's CPU, each a
  // step at least on a board (BoardMessageSeconds).
  EXPECT_NEAR(b->chain_message_s, 0.2e-3 + 2 * step, 1e-12);
  EXPECT_NEAR(b->chain_s, fixed + work / 4 + b->chain_message_s, 1e-9);
  // On four Pi 4B over Ethernet the chain's steps weigh more than the
  // links: it is the bound, above the shared one.
  EXPECT_GT(b->chain_s, b->shared_s);
  EXPECT_NEAR(b->least_s, b->chain_s, 1e-12);
  EXPECT_LT(b->least_s, b->one_device_s);
}

// On one device the chain is that device's own time along it.
TEST(LeastLatency, OneDevicesChainIsItsOwnTime) {
  auto c = ParseCluster("devices:\n  - {name: a, board: pi3b+}\n", "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const LatencyModel m = LatencyModel::FromCluster(*c);
  auto b = LeastLatency(m, Lenet());
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->chain_message_s, 0);
  EXPECT_LE(b->chain_s, b->one_device_s + 1e-12);
  EXPECT_NEAR(b->least_s, b->one_device_s, 1e-12);
}

TEST(LeastLatency, NoDevicesIsAnError) {
  Cluster c;
  EXPECT_FALSE(LeastLatency(LatencyModel::FromCluster(c), Lenet()).ok());
}

}  // namespace
}  // namespace shoal
