// A re-plan's decision and words without a server: whether a new plan is
// worth a switch, the shares line, the record and the log text.
#include "serve/replan.h"

#include <gtest/gtest.h>

#include "models/load_model.h"
#include "partition/strategy.h"
#include "serve/monitor.h"

namespace shoal {
namespace {

std::vector<DeviceSpec> Specs(const std::vector<double>& speeds) {
  std::vector<DeviceSpec> out;
  for (size_t d = 0; d < speeds.size(); ++d) {
    DeviceSpec s;
    s.name = "dev" + std::to_string(d);
    s.address = "127.0.0.1:" + std::to_string(7000 + d);
    s.speed = speeds[d];
    out.push_back(s);
  }
  return out;
}

// lenet5 as a pipeline over devices of these speeds.
Plan Pipeline(const std::vector<DeviceSpec>& devs) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("lenet5", lo);
  EXPECT_TRUE(m.ok()) << m.status().message();
  PlanOptions po;
  po.strategy = "pipeline";
  for (const auto& d : devs) po.devices.push_back({d.name, d.speed, 0});
  auto p = MakePlan(m->graph, po);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return std::move(p).value();
}

TEST(Replan, TheSamePlanIsKeptWithTheNewSpeeds) {
  const auto was = Specs({1, 1});
  const Plan cur = Pipeline(was);
  // Shares that do not move the cut: the same tasks on the same devices.
  const auto now = Specs({1, 1.01});
  const Plan next = Pipeline(now);
  auto ms = PredictComputeMs(next, now);
  ASSERT_TRUE(ms.ok());
  auto v = JudgeAgainstCurrent(cur, was, next, *ms, now, /*force=*/true, 0.1);
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_TRUE(v->keep_current);
  EXPECT_EQ(v->why, "the planner gives the same plan");
  ASSERT_EQ(v->current_devices.size(), 2u);
  EXPECT_DOUBLE_EQ(v->current_devices[1].speed, 1.01);
  EXPECT_EQ(v->current_ms.size(), 2u);
}

TEST(Replan, ANewPlanMustGainEnoughUnlessForced) {
  const auto was = Specs({1, 1});
  const Plan cur = Pipeline(was);
  const auto now = Specs({8, 1});
  const Plan next = Pipeline(now);
  ASSERT_FALSE(SamePlanShape(cur, next)) << "the cut did not move";
  auto ms = PredictComputeMs(next, now);
  ASSERT_TRUE(ms.ok());
  auto cur_ms = PredictComputeMs(cur, now);
  ASSERT_TRUE(cur_ms.ok());
  const double gain = 1 - MaxOf(*ms) / MaxOf(*cur_ms);
  ASSERT_GT(gain, 0.05);
  // Asked for more than it gains: kept. Less: switched. Forced: switched.
  auto more = JudgeAgainstCurrent(cur, was, next, *ms, now, false, gain + 0.01);
  ASSERT_TRUE(more.ok());
  EXPECT_TRUE(more->keep_current);
  EXPECT_EQ(more->why, "it would not gain enough");
  auto less = JudgeAgainstCurrent(cur, was, next, *ms, now, false, gain - 0.01);
  ASSERT_TRUE(less.ok());
  EXPECT_FALSE(less->keep_current);
  auto forced = JudgeAgainstCurrent(cur, was, next, *ms, now, true, 0.99);
  ASSERT_TRUE(forced.ok());
  EXPECT_FALSE(forced->keep_current);
}

TEST(Replan, AnotherSetOfDevicesIsNotCompared) {
  const auto was = Specs({1, 1});
  const Plan cur = Pipeline(was);
  auto now = Specs({1, 1, 1});
  const Plan next = Pipeline(now);
  auto ms = PredictComputeMs(next, now);
  ASSERT_TRUE(ms.ok());
  auto v = JudgeAgainstCurrent(cur, was, next, *ms, now, false, 0.99);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->keep_current);
  EXPECT_TRUE(v->current_devices.empty());
  // The same names at another address are other devices.
  now = Specs({1, 1});
  now[1].address = "127.0.0.1:9999";
  v = JudgeAgainstCurrent(cur, was, cur, *PredictComputeMs(cur, now), now,
                          false, 0.99);
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->keep_current);
}

TEST(Replan, SharesLineSaysWhatChangedAndWhatLeft) {
  EXPECT_EQ(SharesLine({}, Specs({1, 2})), "dev0 1.00, dev1 2.00");
  EXPECT_EQ(SharesLine(Specs({1, 1, 1}), Specs({2, 0.5})),
            "dev0 1.00 -> 2.00, dev1 1.00 -> 0.50, dev2 1.00 -> gone");
}

TEST(Replan, RecordAndReportOfASwitch) {
  const rpc::Replan r = ReplanRecord(3, "imbalance", "dev1 is slow", "lop",
                                     Specs({1, 1}), Specs({2, 1}), {4, 7}, 9);
  EXPECT_EQ(r.generation(), 3);
  EXPECT_EQ(r.kind(), "imbalance");
  EXPECT_EQ(r.strategy(), "lop");
  ASSERT_EQ(r.devices_size(), 2);
  EXPECT_EQ(r.old_shares(0), 1);
  EXPECT_EQ(r.new_shares(0), 2);
  EXPECT_EQ(r.predicted_ms(), 7);
  EXPECT_EQ(r.measured_ms(), 9);
  EXPECT_GT(r.unix_ms(), 0);

  SwitchReport s;
  s.generation = 3;
  s.strategy = "lop";
  s.reason = "dev1 is slow";
  s.old_devices = Specs({1, 1});
  s.devices = Specs({2, 1});
  s.predicted_ms = {4, 7};
  s.measured_before_ms = {5, 12.5};
  s.deploy_ms = 120;
  s.switch_ms = 300;
  s.uploaded_bytes = 4096;
  s.old_requests = 2;
  s.old_generation = 2;
  EXPECT_EQ(SwitchReportText(s),
            "re-plan -> generation 3 (lop on 2 devices) because dev1 is slow\n"
            "  shares: dev0 1.00 -> 2.00, dev1 1.00 -> 1.00\n"
            "  predicted compute per request: dev0 4.00 ms (measured on the "
            "old plan: 5.00 ms), dev1 7.00 ms (measured on the old plan: "
            "12.50 ms)\n"
            "  deployed in 120 ms (4.0 KiB of weights uploaded); drained 2 "
            "requests of generation 2; switch took 300 ms");
  SwitchReport first;
  first.first = true;
  first.generation = 1;
  first.strategy = "pipeline";
  first.note = "fell back";
  first.reason = "start";
  first.devices = Specs({1});
  first.predicted_ms = {3};
  first.drained_first = true;
  EXPECT_EQ(SwitchReportText(first),
            "plan: generation 1 (pipeline on 1 device; fell back) because "
            "start\n"
            "  shares: dev0 1.00\n"
            "  predicted compute per request: dev0 3.00 ms\n"
            "  deployed in 0 ms (0 B of weights uploaded) after draining "
            "first");
}

}  // namespace
}  // namespace shoal
