// The monitor's measurements and decisions on made-up statistics: per-device
// compute per request from task medians, the window, when a device is out of
// balance, and the speeds a re-plan uses.
#include "serve/monitor.h"

#include <gtest/gtest.h>

#include "models/load_model.h"
#include "partition/strategy.h"

namespace shoal {
namespace {

Plan PipelinePlan(int devices) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("lenet5", lo);
  EXPECT_TRUE(m.ok()) << m.status().message();
  PlanOptions po;
  po.strategy = "pipeline";
  for (int d = 0; d < devices; ++d) {
    po.devices.push_back(PlanDevice{"dev" + std::to_string(d), 1.0, 0});
  }
  auto p = MakePlan(m->graph, po);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

std::vector<DeviceSpec> Specs(const std::vector<double>& speeds) {
  std::vector<DeviceSpec> out;
  for (size_t d = 0; d < speeds.size(); ++d) {
    DeviceSpec s;
    s.name = "dev" + std::to_string(d);
    s.speed = speeds[d];
    out.push_back(s);
  }
  return out;
}

// One tick's statistics: every task of the plan ran `runs` times on its
// device, taking `ms[device]` each (plus one slow outlier per task).
std::vector<DeviceStats> Tick(const Plan& p, const std::vector<float>& ms,
                              int runs) {
  std::vector<DeviceStats> out(p.devices.size());
  for (size_t d = 0; d < out.size(); ++d) {
    out[d].task_compute_ms.resize(p.tasks.size());
    out[d].queue_histogram = {0, 2, 2};  // mean 1.5
  }
  for (const auto& t : p.tasks) {
    for (int d : t.devices) {
      auto& v = out[d].task_compute_ms[t.id];
      for (int i = 0; i < runs; ++i) v.push_back(ms[d]);
      v.push_back(100 * ms[d]);  // a stray slow run the median ignores
    }
  }
  return out;
}

int TasksWithNodes(const Plan& p, int d) {
  int n = 0;
  for (const auto& t : p.tasks) {
    if (t.fragment.nodes.empty()) continue;
    for (int x : t.devices) n += x == d;
  }
  return n;
}

TEST(Monitor, PredictionFollowsSpeed) {
  const Plan p = PipelinePlan(2);
  auto a = PredictComputeMs(p, Specs({1, 1}));
  auto b = PredictComputeMs(p, Specs({1, 2}));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_GT((*a)[0], 0);
  EXPECT_GT((*a)[1], 0);
  EXPECT_DOUBLE_EQ((*a)[0], (*b)[0]);
  EXPECT_NEAR((*b)[1], (*a)[1] / 2, 1e-9);
  EXPECT_FALSE(PredictComputeMs(p, Specs({1})).ok());
}

TEST(Monitor, WindowMeasuresTaskMediansAndSlides) {
  const Plan p = PipelinePlan(2);
  LoadWindow w(2);
  w.Add(Tick(p, {2, 3}, 4));
  auto loads = w.Loads(p, {1, 1});
  ASSERT_EQ(loads.size(), 2u);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(loads[d].samples, 5);
    EXPECT_NEAR(loads[d].measured_ms, (d ? 3 : 2) * TasksWithNodes(p, d), 1e-4);
    EXPECT_DOUBLE_EQ(loads[d].queue_mean, 1.5);
    EXPECT_DOUBLE_EQ(loads[d].predicted_ms, 1);
  }
  // Two more ticks at another speed push the first one out of the window.
  w.Add(Tick(p, {8, 3}, 4));
  w.Add(Tick(p, {8, 3}, 4));
  loads = w.Loads(p, {1, 1});
  EXPECT_EQ(loads[0].samples, 10);
  EXPECT_NEAR(loads[0].measured_ms, 8 * TasksWithNodes(p, 0), 1e-4);
  w.Clear();
  loads = w.Loads(p, {1, 1});
  EXPECT_EQ(loads[0].samples, 0);
  EXPECT_EQ(loads[0].measured_ms, 0);
}

std::vector<DeviceLoad> Loads(const std::vector<double>& predicted,
                              const std::vector<double>& measured,
                              int64_t samples = 10) {
  std::vector<DeviceLoad> out;
  for (size_t d = 0; d < predicted.size(); ++d) {
    DeviceLoad l;
    l.predicted_ms = predicted[d];
    l.measured_ms = measured[d];
    l.samples = samples;
    out.push_back(l);
  }
  return out;
}

const std::vector<std::string> kNames = {"a", "b", "c"};

TEST(Monitor, FindsTheSlowedDevice) {
  // b takes 5x its prediction while a and c take about theirs (scaled).
  auto imb = FindImbalance(Loads({10, 20, 10}, {20, 200, 22}), kNames, 1.5, 3);
  ASSERT_TRUE(imb.found);
  EXPECT_EQ(imb.device, 1);
  EXPECT_NEAR(imb.ratio, 10 / 2.1, 1e-9);
  EXPECT_NE(imb.why.find("device b is slower than planned"), std::string::npos)
      << imb.why;
}

TEST(Monitor, FindsASpedUpDevice) {
  auto imb = FindImbalance(Loads({10, 10, 10}, {10, 10, 3}), kNames, 1.5, 3);
  ASSERT_TRUE(imb.found);
  EXPECT_EQ(imb.device, 2);
  EXPECT_NE(imb.why.find("faster"), std::string::npos);
}

TEST(Monitor, BalancedOrUnmeasuredIsLeftAlone) {
  // A common factor (the model is off for every device alike) is balance.
  EXPECT_FALSE(
      FindImbalance(Loads({10, 20, 10}, {30, 70, 32}), kNames, 1.5, 3).found);
  // Too few runs to judge.
  EXPECT_FALSE(
      FindImbalance(Loads({10, 10, 10}, {10, 90, 10}, 2), kNames, 1.5, 3)
          .found);
  // One measured device has nothing to compare with.
  auto l = Loads({10, 10, 0}, {10, 90, 0});
  l[0].samples = 0;
  EXPECT_FALSE(FindImbalance(l, kNames, 1.5, 3).found);
}

TEST(Monitor, MeasuredSpeedsKeepTheClusterScale) {
  auto s = MeasuredSpeeds(Loads({10, 10, 10}, {20, 100, 20}), {1, 1, 2}, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 1, 1e-9);
  EXPECT_NEAR(s[1], 0.2, 1e-9);
  EXPECT_NEAR(s[2], 2, 1e-9);
  // An unmeasured device keeps its speed.
  auto l = Loads({10, 10, 10}, {10, 50, 10});
  l[2].samples = 0;
  s = MeasuredSpeeds(l, {1, 1, 3}, 3);
  EXPECT_NEAR(s[2], 3, 1e-9);
  EXPECT_NEAR(s[0] / s[1], 5, 1e-9);
}

// A device left with a sliver of the work is timed by fixed overhead: it is
// not judged, and its speed is not re-measured from it.
TEST(Monitor, ASliverOfWorkIsNotJudged) {
  auto l = Loads({60, 0.1, 100}, {6, 0.3, 10});
  EXPECT_FALSE(FindImbalance(l, kNames, 1.5, 3).found);
  auto s = MeasuredSpeeds(l, {1.2, 0.04, 0.56}, 3);
  EXPECT_NEAR(s[1], 0.04, 1e-12);
  // At 2 % of the busiest device's prediction it is judged again.
  l = Loads({60, 2, 100}, {6, 0.6, 10});
  auto imb = FindImbalance(l, kNames, 1.5, 3);
  ASSERT_TRUE(imb.found);
  EXPECT_EQ(imb.device, 1);
}

// However slow a device measures, its speed stays a share a plan accepts
// (plan/plan.h), so the next deployment is not refused by the workers.
TEST(Monitor, MeasuredSpeedsStayWithinTheShareRange) {
  auto s = MeasuredSpeeds(Loads({10, 10, 10}, {10, 1e5, 10}), {1, 0.01, 1}, 3);
  EXPECT_EQ(s[1], kMinShare);
  s = MeasuredSpeeds(Loads({10, 10, 10}, {10, 1e-3, 10}), {1, 500, 1}, 3);
  EXPECT_EQ(s[1], kMaxShare);
}

TEST(Monitor, Median) {
  EXPECT_EQ(Median({}), 0);
  EXPECT_EQ(Median({3, 1, 2}), 2);
  EXPECT_EQ(Median({4, 1, 3, 2}), 2.5);
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

// Utilisation: compute busy over wall time, summed over the window's ticks.
TEST(LoadWindow, Utilisation) {
  const Plan p = PipelinePlan(2);
  LoadWindow w(2);
  auto tick = Tick(p, {1, 1}, 3);
  tick[0].busy_ms = 250;
  tick[0].elapsed_ms = 1000;
  tick[1].busy_ms = 0;
  tick[1].elapsed_ms = 1000;
  w.Add(tick);
  tick[0].busy_ms = 750;
  w.Add(tick);
  const auto loads = w.Loads(p, {1, 1});
  EXPECT_DOUBLE_EQ(loads[0].utilisation, 0.5);
  EXPECT_DOUBLE_EQ(loads[1].utilisation, 0);
  // Busy beyond the wall time (clocks read apart) is capped at 1.
  tick[1].busy_ms = 1500;
  w.Add(tick);
  w.Add(tick);
  EXPECT_DOUBLE_EQ(w.Loads(p, {1, 1})[1].utilisation, 1);
}

}  // namespace
}  // namespace shoal
