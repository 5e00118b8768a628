#include "sim/layer_table.h"

#include <gtest/gtest.h>

#include "sim/latency_model.h"

namespace shoal {
namespace {

TEST(Interpolate, LinearBetweenProportionalOutside) {
  const std::vector<std::pair<double, double>> pts = {
      {10, 2}, {20, 3}, {40, 7}};
  EXPECT_DOUBLE_EQ(Interpolate(pts, 15), 2.5);
  EXPECT_DOUBLE_EQ(Interpolate(pts, 30), 5);
  EXPECT_DOUBLE_EQ(Interpolate(pts, 80), 14);  // beyond the last: 7 * 2
  // Below the first along the line through the first two (an intercept of
  // 1), which stays above proportional (2 * 5 / 10 = 1).
  EXPECT_DOUBLE_EQ(Interpolate(pts, 5), 1.5);
  // A line falling below proportional is not followed.
  EXPECT_DOUBLE_EQ(Interpolate({{10, 1}, {20, 4}}, 5), 0.5);
  EXPECT_DOUBLE_EQ(Interpolate({{10, 4}}, 5), 2);
  EXPECT_DOUBLE_EQ(Interpolate({}, 5), 0);
}

// A conv of 1000 MACs whose input is 100 elements, weights 50, output 100.
NodeCost Conv(double fraction_out, double fraction_rows) {
  NodeCost c;
  c.name = "conv1";
  c.op = "Conv";
  c.macs = int64_t(1000 * fraction_out * fraction_rows);
  c.input_elements = int64_t(100 * fraction_rows);
  c.weight_elements = int64_t(50 * fraction_out);
  c.output_elements = int64_t(100 * fraction_out * fraction_rows);
  return c;
}

LayerSample SampleOf(const NodeCost& c, const std::string& variant,
                     double seconds, double alone = 0) {
  LayerSample s;
  s.model = "m";
  s.layer = c.name;
  s.variant = variant;
  s.op = c.op;
  s.macs = c.macs;
  s.bytes = c.input_bytes() + c.output_bytes() + c.weight_bytes();
  s.seconds = seconds;
  s.alone_seconds = alone;
  return s;
}

TEST(LayerTable, ReadsASplitOffItsOwnKindsCurve) {
  LayerTable t;
  t.Add(SampleOf(Conv(1, 1), "whole", 2.0, 4.0));
  t.Add(SampleOf(Conv(0.5, 1), "lop 1/2", 3.0));
  t.Add(SampleOf(Conv(0.25, 1), "lop 1/4", 2.0));
  t.Add(SampleOf(Conv(1, 0.5), "rows 1/2", 1.0));
  t.Add(SampleOf(Conv(1, 0.25), "rows 1/4", 0.6));

  auto whole = t.Find(Conv(1, 1));
  ASSERT_TRUE(whole.has_value());
  EXPECT_TRUE(whole->whole);
  EXPECT_DOUBLE_EQ(whole->context_s, 2.0);
  EXPECT_DOUBLE_EQ(whole->alone_s, 4.0);

  // 3/8 of the output channels: half way between lop 1/4 and lop 1/2.
  auto lop = t.Find(Conv(0.375, 1));
  ASSERT_TRUE(lop.has_value());
  EXPECT_FALSE(lop->whole);
  EXPECT_NEAR(lop->alone_s, 2.5, 1e-9);
  // In a fragment, scaled like the whole layer: in the model 2 of alone 4.
  EXPECT_NEAR(lop->context_s, 1.25, 1e-9);

  // The same MACs as a strip of rows moves other bytes: the rows curve.
  auto rows = t.Find(Conv(1, 0.375));
  ASSERT_TRUE(rows.has_value());
  EXPECT_NEAR(rows->alone_s, 0.8, 1e-9);

  NodeCost other = Conv(1, 1);
  other.name = "conv2";
  EXPECT_FALSE(t.Find(other).has_value());
}

Cluster OneDevice(double cpu) {
  Cluster c = EqualCluster(1);
  c.devices[0].cpu = cpu;
  return c;
}

Profile ProfileOf(std::vector<LayerSample> samples) {
  Profile p;
  DeviceProfile d;
  d.name = EqualCluster(1).devices[0].name;
  d.fits["*"] = OpFit{1.0, 0, 0, 1};  // 1 s for anything not measured
  d.samples = std::move(samples);
  p.devices.push_back(d);
  return p;
}

TEST(LatencyModel, FragmentPaysTheReordersAtItsEdgesOnly) {
  NodeCost pool;
  pool.name = "pool1";
  pool.op = "MaxPool";
  pool.input_elements = 100;
  pool.output_elements = 25;
  // conv: 2 s in the model, 4 s alone; pool: 0.5 in the model, 1.5 alone.
  Profile p = ProfileOf({SampleOf(Conv(1, 1), "whole", 2.0, 4.0),
                         SampleOf(pool, "whole", 0.5, 1.5)});
  auto m = LatencyModel::FromProfile(OneDevice(0), p, "m").value();
  EXPECT_DOUBLE_EQ(m.FragmentSeconds(0, {Conv(1, 1)}), 4.0);
  EXPECT_DOUBLE_EQ(m.FragmentSeconds(0, {pool}), 1.5);
  // In one fragment: both in the model, plus the conv's input reorder
  // (its 2 s extra, by bytes 100 in / 100 out) and the pool's output
  // reorder (1 s extra, 25 of 125 elements).
  EXPECT_DOUBLE_EQ(m.FragmentSeconds(0, {Conv(1, 1), pool}),
                   2.0 + 0.5 + 1.0 + 0.2);
  // The planner prices a whole layer as it runs in the model.
  EXPECT_DOUBLE_EQ(m.NodeSeconds(0, Conv(1, 1)), 2.0);

  // Another model's layer of the same name is not this one: a measurement
  // of the same op and size, else the fit.
  auto other = LatencyModel::FromProfile(OneDevice(0), p, "n").value();
  EXPECT_DOUBLE_EQ(other.FragmentSeconds(0, {pool}), 0.5);
  pool.output_elements = 50;
  EXPECT_DOUBLE_EQ(other.FragmentSeconds(0, {pool}), 1.0);
}

TEST(LatencyModel, UnderAQuotaSamplesAreCpuOverTheFraction) {
  // 0.1 of a core: a back-to-back wall time of 30 ms holds throttled
  // periods; its 2 ms of CPU paced is 20 ms, and the simulator adds the
  // throttling a task really meets.
  LayerSample s = SampleOf(Conv(1, 1), "whole", 0.030, 0.060);
  s.cpu_seconds = 0.002;
  auto m = LatencyModel::FromProfile(OneDevice(0.1), ProfileOf({s}), "m");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const NodeTimes t = m.value().Times(0, Conv(1, 1));
  EXPECT_NEAR(t.context_s, 0.020, 1e-12);
  EXPECT_NEAR(t.alone_s, 0.040, 1e-12);
  // Unlimited devices keep their wall times.
  auto full = LatencyModel::FromProfile(OneDevice(0), ProfileOf({s}), "m");
  EXPECT_NEAR(full.value().Times(0, Conv(1, 1)).context_s, 0.030, 1e-12);
  // Newer profiles keep the CPU alone: paced, whatever the wall time was.
  s.alone_cpu_seconds = 0.003;
  auto cpu = LatencyModel::FromProfile(OneDevice(0.1), ProfileOf({s}), "m");
  EXPECT_NEAR(cpu.value().Times(0, Conv(1, 1)).alone_s, 0.030, 1e-12);
}

}  // namespace
}  // namespace shoal
