#include "sim/latency_bound.h"

#include <gtest/gtest.h>

#include "models/zoo.h"

namespace shoal {
namespace {

Graph Lenet() {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  EXPECT_TRUE(g.ok());
  return *g;
}

TEST(LeastLatency, ComputeSpreadsOverTheDevicesByTheirRates) {
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
  auto b = LeastLatency(m, g, 784);
  ASSERT_TRUE(b.ok()) << b.status().message();
  // Rates 1 and 3: together four times one's rate.
  EXPECT_NEAR(b->compute_s, *one / 4, 1e-12);
  // 784 bytes at 62 Mbit/s after 9 ms; 9 ms back.
  EXPECT_NEAR(b->input_s, 9e-3 + 784 * 8 / 62e6, 1e-12);
  EXPECT_NEAR(b->output_s, 9e-3, 1e-12);
  EXPECT_EQ(b->fastest_device, 1);
  EXPECT_NEAR(b->one_device_s, *one / 3 + b->input_s + 9e-3, 1e-12);
  EXPECT_LT(b->total_s(), b->one_device_s);
}

TEST(LeastLatency, NoDevicesIsAnError) {
  Cluster c;
  EXPECT_FALSE(LeastLatency(LatencyModel::FromCluster(c), Lenet(), 4).ok());
}

}  // namespace
}  // namespace shoal
