#include "sim/latency_model.h"

#include <gtest/gtest.h>

#include <cstdio>

#include "models/load_model.h"
#include "sim/fit.h"

namespace shoal {
namespace {

Cluster TwoDevices() {
  Cluster c = EqualCluster(2);
  c.devices[1].speed = 4;
  c.devices[0].link = Link{8e6, 0.01};  // 1 MB/s, 10 ms
  return c;
}

TEST(LatencyModel, SpecScalesWithSpeed) {
  LatencyModel m = LatencyModel::FromCluster(TwoDevices());
  NodeCost conv;
  conv.op = "Conv";
  conv.macs = int64_t(1.65e9);
  EXPECT_NEAR(m.NodeSeconds(0, conv), 1.0, 1e-6);
  EXPECT_NEAR(m.NodeSeconds(1, conv), 0.25, 1e-6);
  EXPECT_NEAR(m.MacsPerSecond(1), 4 * kPi3MacsPerSecond, 1);
}

TEST(LatencyModel, TransferUsesSendersLink) {
  LatencyModel m = LatencyModel::FromCluster(TwoDevices());
  EXPECT_NEAR(m.TransferSeconds(0, 1, 1000000), 1.01, 1e-9);
  EXPECT_EQ(m.TransferSeconds(1, 0, 1000000), 0);  // unlimited link
  EXPECT_EQ(m.TransferSeconds(0, 0, 1000000), 0);
}

TEST(LatencyModel, GraphSecondsSumsNodes) {
  LoadOptions lo;
  auto model_or = LoadModel("lenet5", lo);
  ASSERT_TRUE(model_or.ok()) << model_or.status().message();
  const Model& model = model_or.value();
  LatencyModel m = LatencyModel::FromCluster(TwoDevices());
  const double s0 = m.GraphSeconds(0, model.graph).value();
  const double s1 = m.GraphSeconds(1, model.graph).value();
  EXPECT_GT(s0, 0);
  EXPECT_NEAR(s0 / s1, 4.0, 1e-9);
}

TEST(Profile, SaveLoadRoundTripAndDrivesTheModel) {
  Profile p;
  for (const char* name : {"dev0", "dev1"}) {
    DeviceProfile d;
    d.name = name;
    d.fits["*"] = OpFit{0.001, 1e-9, 0, 3};
    d.fits["Conv"] = OpFit{0.002, 2e-9, 1e-10, 5};
    d.link = Link{50e6, 0.002};
    d.samples.push_back(
        LayerSample{"lenet5", "conv1", "whole", "Conv", 1000, 400, 0.0021});
    p.devices.push_back(d);
  }
  const std::string path = ::testing::TempDir() + "/profile_rt.json";
  ASSERT_TRUE(SaveProfile(p, path).ok());
  auto q_or = LoadProfile(path);
  ASSERT_TRUE(q_or.ok()) << q_or.status().message();
  const Profile& q = q_or.value();
  ASSERT_EQ(q.devices.size(), 2u);
  EXPECT_EQ(q.devices[1].samples[0].layer, "conv1");
  auto m_or = LatencyModel::FromProfile(EqualCluster(2), q);
  ASSERT_TRUE(m_or.ok()) << m_or.status().message();
  const LatencyModel& m = m_or.value();
  NodeCost conv;
  conv.op = "Conv";
  conv.macs = 1000000;
  EXPECT_NEAR(m.NodeSeconds(0, conv), 0.002 + 2e-3, 1e-12);
  NodeCost pool;
  pool.op = "MaxPool";
  pool.macs = 1000000;
  EXPECT_NEAR(m.NodeSeconds(0, pool), 0.001 + 1e-3, 1e-12);
  EXPECT_NEAR(m.TransferSeconds(0, 1, 50), 0.002 + 8e-6, 1e-12);
  std::remove(path.c_str());
}

TEST(Profile, MissingDeviceIsNamed) {
  Profile p;
  auto m = LatencyModel::FromProfile(EqualCluster(1), p);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("dev0"), std::string::npos);
}

// A node measured on a device is predicted by its measurement (the
// profiling database), others by the fit; equal measurements are averaged.
TEST(LatencyModel, MeasuredNodesUseTheirMeasurement) {
  Profile p;
  DeviceProfile d;
  d.name = "dev0";
  auto sample = [](int64_t macs, double seconds) {
    LayerSample s;
    s.op = "Conv";
    s.macs = macs;
    s.bytes = 1000;
    s.seconds = seconds;
    return s;
  };
  // On a line through the origin except the layer measured in context.
  d.samples = {sample(1000000, 0.010), sample(2000000, 0.020),
               sample(4000000, 0.040), sample(3000000, 0.012),
               sample(3000000, 0.018)};
  RefitDevice(&d);
  p.devices.push_back(d);
  auto m = LatencyModel::FromProfile(EqualCluster(1), p);
  ASSERT_TRUE(m.ok()) << m.status().message();
  NodeCost c;
  c.op = "Conv";
  c.macs = 3000000;
  c.input_elements = 1000 / kBytesPerElement;
  EXPECT_NEAR(m->NodeSeconds(0, c), 0.015, 1e-12);
  c.macs = 5000000;  // never measured: the fit
  const OpFit& f = p.devices[0].fits.at("Conv");
  EXPECT_NEAR(
      m->NodeSeconds(0, c),
      std::max(0.0, f.intercept_s + f.per_mac_s * 5e6 + f.per_byte_s * 1000),
      1e-12);
}

}  // namespace
}  // namespace shoal
