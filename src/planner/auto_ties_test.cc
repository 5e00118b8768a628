// auto between candidates it predicts alike: the one with fewer tasks,
// since what starting a task costs a worker is not in the prediction.
#include <gtest/gtest.h>

#include "cluster/cluster.h"
#include "models/load_model.h"
#include "partition/strategy.h"
#include "sim/latency_model.h"

namespace shoal {
namespace {

// On one device every strategy computes the same layers there: strips of
// rows (one task a layer) are predicted within a hair of the model whole,
// and measured far slower; auto keeps the model whole, in one task.
TEST(AutoTies, OneDeviceKeepsTheModelInOneTask) {
  auto c = ParseCluster(
      "devices:\n  - {name: laptop, address: 127.0.0.1:7601, board: laptop}\n",
      "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  for (const char* model : {"resnet50", "resnet18", "vgg16"}) {
    LoadOptions lo;
    lo.with_weights = false;
    lo.fuse_batchnorm = true;
    auto m = LoadModel(model, lo);
    ASSERT_TRUE(m.ok()) << m.status().message();
    PlanOptions po;
    po.strategy = "auto";
    po.devices = c->PlanDevices();
    po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(*c));
    po.model.spec = model;
    po.input_pixels = true;
    auto p = MakePlan(m->graph, po);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->tasks.size(), 1u)
        << model << ": " << (p->prediction ? p->prediction->method : "");
    // The candidates with more tasks were not predicted clearly faster.
    ASSERT_TRUE(p->prediction.has_value());
    for (const auto& a : p->prediction->alternatives) {
      if (a.latency_s <= 0) continue;
      EXPECT_GE(a.latency_s, p->prediction->latency_s * (1 - 1e-3))
          << model << ": " << a.name;
    }
  }
}

}  // namespace
}  // namespace shoal
