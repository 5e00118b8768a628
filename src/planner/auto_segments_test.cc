// auto's fused-segment candidates (partition/fused_segments.h): compared
// with the other strips, and chosen where one message per segment of
// residual blocks beats one per block.
#include <gtest/gtest.h>

#include "cluster/cluster.h"
#include "models/load_model.h"
#include "partition/strategy.h"
#include "sim/latency_model.h"

namespace shoal {
namespace {

// `n` Pi 3B+ boards on their Wi-Fi (62 Mbit/s, 9 ms a message), planned as
// `shoal plan` plans for them: images as 8-bit pixels, ReLU outputs lz4'd.
PlanOptions PiThrees(int n, const std::string& model) {
  std::string yaml = "devices:\n";
  for (int i = 0; i < n; ++i) {
    yaml += "  - name: pi" + std::to_string(i) +
            "\n    address: 127.0.0.1:" + std::to_string(7201 + i) +
            "\n    board: pi3b+\n";
  }
  auto c = ParseCluster(yaml, "test");
  EXPECT_TRUE(c.ok()) << c.status().message();
  PlanOptions po;
  po.strategy = "auto";
  po.devices = c->PlanDevices();
  po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(*c));
  po.model.spec = model;
  po.input_pixels = true;
  po.wire.lz4 = true;
  po.link_rates = c->UplinkRates();
  po.link_latency_s = c->MaxLinkLatency();
  return po;
}

// ResNet-18 on six Pi 3B+: segments of two to three residual blocks, the
// first (which reads the image over one uplink) shallower, are predicted
// faster than strips that exchange halos at every block (195.8 ms against
// 198.1 for the best of those, when written).
TEST(AutoSegments, ChosenForResNet18OnSixPiThrees) {
  LoadOptions lo;
  lo.with_weights = false;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("resnet18", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto p = MakePlan(m->graph, PiThrees(6, "resnet18"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->prediction.has_value());
  EXPECT_EQ(p->prediction->method.rfind("segments-", 0), 0u)
      << p->prediction->method;
  double best_strips = 0;
  for (const auto& a : p->prediction->alternatives) {
    if (a.name.rfind("spatial", 0) != 0 || a.latency_s <= 0) continue;
    if (best_strips == 0 || a.latency_s < best_strips)
      best_strips = a.latency_s;
  }
  EXPECT_LT(p->prediction->latency_s, best_strips);
}

}  // namespace
}  // namespace shoal
