#include "sim/fit.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "sim/latency_model.h"

namespace shoal {
namespace {

LayerSample S(const std::string& op, int64_t macs, int64_t bytes, double s) {
  return LayerSample{
      "m", op + std::to_string(macs), "whole", op, macs, bytes, s, 0};
}

TEST(Fit, RecoversKnownCoefficients) {
  const double a = 2e-4, b = 6e-10, c = 3e-9;
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> macs(1000, 500000000);
  std::uniform_int_distribution<int64_t> bytes(100, 50000000);
  std::vector<LayerSample> v;
  for (int i = 0; i < 40; ++i) {
    const int64_t m = macs(rng), y = bytes(rng);
    v.push_back(S("Conv", m, y, a + b * m + c * y));
  }
  std::vector<const LayerSample*> p;
  for (const auto& s : v) p.push_back(&s);
  const OpFit f = FitSamples(p);
  EXPECT_NEAR(f.intercept_s, a, a * 1e-6);
  EXPECT_NEAR(f.per_mac_s, b, b * 1e-6);
  EXPECT_NEAR(f.per_byte_s, c, c * 1e-6);
  EXPECT_EQ(f.samples, 40);
}

TEST(Fit, CoefficientsStayNonNegative) {
  // Time falls with bytes here: an unconstrained fit would give a negative
  // per-byte cost; NNLS drops it and fits the rest.
  std::vector<LayerSample> v = {S("Relu", 0, 1000, 0.010),
                                S("Relu", 0, 2000, 0.009),
                                S("Relu", 0, 4000, 0.008)};
  std::vector<const LayerSample*> p;
  for (const auto& s : v) p.push_back(&s);
  const OpFit f = FitSamples(p);
  EXPECT_GE(f.intercept_s, 0);
  EXPECT_GE(f.per_mac_s, 0);
  EXPECT_EQ(f.per_byte_s, 0);
  EXPECT_NEAR(f.intercept_s, 0.009, 0.001);
}

TEST(Fit, NoisyDataFitsToRelativeError) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(1.0, 0.03);
  std::vector<LayerSample> v;
  for (int64_t m = 1000000; m <= 1000000000; m *= 2) {
    v.push_back(S("Conv", m, m / 10, (1e-4 + 1e-9 * m) * noise(rng)));
  }
  std::vector<const LayerSample*> p;
  for (const auto& s : v) p.push_back(&s);
  const OpFit f = FitSamples(p);
  for (const auto& s : v) {
    const double pred =
        f.intercept_s + f.per_mac_s * s.macs + f.per_byte_s * s.bytes;
    EXPECT_NEAR(pred / s.seconds, 1.0, 0.12) << s.macs;
  }
}

TEST(Fit, UnderAQuotaFitsPacedSeconds) {
  // 0.05 of a core: back-to-back wall times land on whole throttled
  // periods (here 40 ms or 60 ms whatever the work); CPU / 0.05 does not.
  std::vector<LayerSample> v = {S("Conv", 1000000, 0, 0.040),
                                S("Conv", 2000000, 0, 0.060),
                                S("Conv", 4000000, 0, 0.060)};
  v[0].cpu_seconds = 0.001;
  v[1].cpu_seconds = 0.002;
  v[2].cpu_seconds = 0.004;
  std::vector<const LayerSample*> p;
  for (const auto& s : v) p.push_back(&s);
  const OpFit f = FitSamples(p, CpuQuota{0.001, 0.020});
  EXPECT_NEAR(f.per_mac_s, 0.001 / 0.05 / 1000000, 1e-15);
  EXPECT_NEAR(f.intercept_s, 0, 1e-9);
  // Without a quota the wall times are fitted.
  const OpFit w = FitSamples(p);
  EXPECT_GT(w.intercept_s, 0.01);
}

// A worker paced to 3.1 % of a core (a calibrated Pi 3) under a cgroup
// quota of 35.5 % (room for gRPC's threads): its compute takes CPU / 0.031,
// so the fits and the latency model price it so, not at CPU / 0.355, which
// made every prediction from such a profile about 10x too fast.
TEST(Profile, APacedWorkersComputeRunsAtItsPace) {
  DeviceProfile d;
  d.name = "pi0";
  d.has_cpu_quota = true;
  d.cpu_quota = CpuQuota{0.0071, 0.02};
  d.samples = {S("Conv", 1000000, 0, 0.001 / 0.031),
               S("Conv", 2000000, 0, 0.002 / 0.031)};
  d.samples[0].cpu_seconds = 0.001;
  d.samples[1].cpu_seconds = 0.002;
  RefitDevice(&d);
  EXPECT_NEAR(d.fits.at("Conv").per_mac_s, 0.001 / 0.355 / 1e6, 1e-15);
  d.cpu_pace = 0.031;
  EXPECT_NEAR(ComputeQuota(d).fraction(), 0.031, 1e-12);
  EXPECT_NEAR(ComputeQuota(d).period_s, 0.02, 1e-12);
  RefitDevice(&d);
  EXPECT_NEAR(d.fits.at("Conv").per_mac_s, 0.001 / 0.031 / 1e6, 1e-15);
  // A pace above the quota: the quota is what limits.
  DeviceProfile fast = d;
  fast.cpu_pace = 0.5;
  EXPECT_NEAR(ComputeQuota(fast).fraction(), 0.355, 1e-12);

  Profile p;
  p.devices.push_back(d);
  const std::string path = ::testing::TempDir() + "/paced_profile.json";
  ASSERT_TRUE(SaveProfile(p, path).ok());
  auto back = LoadProfile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->devices[0].cpu_pace, 0.031);
  // And the model prices a layer at its paced time.
  Cluster c;
  DeviceSpec spec;
  spec.name = "pi0";
  c.devices.push_back(spec);
  auto m = LatencyModel::FromProfile(c, *back, "m");
  ASSERT_TRUE(m.ok()) << m.status().message();
  NodeCost conv;
  conv.op = "Conv";
  conv.macs = 1000000;
  EXPECT_NEAR(m->NodeSeconds(0, conv), 0.001 / 0.031, 1e-6);

  // A pace that is no fraction of a core is refused, naming the device.
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fputs(
        "{\"format\": \"shoal-profile\", \"version\": 1, \"devices\": "
        "[{\"name\": \"pi0\", \"link\": {\"bandwidth_bps\": 1e6, "
        "\"latency_s\": 0.01}, \"cpu_pace\": -1}]}",
        f);
    std::fclose(f);
  }
  auto bad = LoadProfile(path);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("pi0"), std::string::npos)
      << bad.status().message();
}

TEST(Profile, InModelTimesTakeTheModelsCpuShare) {
  // The model ran 100 ms of wall time on 5 ms of CPU (0.05 of a core);
  // conv's share was 60 ms. Timed alone it took 2 periods (45 ms) for
  // 1.1 ms of CPU; in the model its CPU is 60 ms * 0.05 = 3 ms, not
  // 1.1 * 60 / 45.
  std::vector<LayerSample> v = {S("Conv", 1000, 0, 0.045),
                                S("Relu", 0, 100, 0.002)};
  v[0].layer = "conv";
  v[0].cpu_seconds = 0.0011;
  v[1].layer = "relu";
  v[1].variant = "rows 1/2";  // a split variant: not in the model
  v[1].cpu_seconds = 0.0001;
  ApplyInModelTimes({{"conv", 0.060}, {"relu", 0.0}, {"pool", 0.040}}, 0.100,
                    0.005, &v);
  EXPECT_DOUBLE_EQ(v[0].seconds, 0.060);
  EXPECT_NEAR(v[0].cpu_seconds, 0.003, 1e-12);
  EXPECT_DOUBLE_EQ(v[0].alone_seconds, 0.045);
  EXPECT_DOUBLE_EQ(v[0].alone_cpu_seconds, 0.0011);
  EXPECT_DOUBLE_EQ(v[1].seconds, 0.002);
  EXPECT_DOUBLE_EQ(v[1].cpu_seconds, 0.0001);
  EXPECT_EQ(v[1].alone_seconds, 0);
  // Paced under the quota: CPU / fraction, alone too.
  const CpuQuota q{0.001, 0.020};
  EXPECT_NEAR(PacedSeconds(v[0], q), 0.060, 1e-12);
  EXPECT_NEAR(PacedAloneSeconds(v[0], q), 0.022, 1e-12);
  EXPECT_DOUBLE_EQ(PacedSeconds(v[0], CpuQuota{}), 0.060);
  EXPECT_DOUBLE_EQ(PacedAloneSeconds(v[0], CpuQuota{}), 0.045);
}

TEST(Profile, MergeAccumulatesReplacesAndRefits) {
  Profile a, b;
  DeviceProfile d;
  d.name = "pi0";
  d.samples = {S("Conv", 1000, 0, 1e-6), S("Conv", 2000, 0, 2e-6)};
  d.link = Link{1e6, 0.01};
  a.devices.push_back(d);
  d.samples = {S("Conv", 2000, 0, 2e-6), S("Gemm", 500, 0, 5e-6)};
  d.samples[0].model = "m2";  // another model's layer: kept beside
  d.link = Link{2e6, 0.02};
  d.send_cpu_s = 3e-4;
  d.recv_cpu_s = 2e-4;
  d.recv_cpu_per_byte_s = 2e-9;
  d.send_cpu_per_byte_s = 1e-9;
  d.idle_cpu_per_s = 1e-3;
  d.samples[0].alone_seconds = 9e-6;  // timed in the model, and alone
  d.samples[0].alone_cpu_seconds = 4e-6;
  d.has_cpu_quota = true;
  d.cpu_quota = CpuQuota{0.0012, 0.02};
  b.devices.push_back(d);
  DeviceProfile e;
  e.name = "pi1";
  e.samples = {S("Conv", 1000, 0, 3e-6)};
  b.devices.push_back(e);
  MergeProfile(b, &a);
  ASSERT_EQ(a.devices.size(), 2u);
  EXPECT_EQ(a.devices[0].samples.size(), 4u);
  EXPECT_EQ(a.devices[0].link.bandwidth_bps, 2e6);
  EXPECT_EQ(a.devices[0].send_cpu_s, 3e-4);
  EXPECT_EQ(a.devices[0].recv_cpu_s, 2e-4);
  EXPECT_EQ(a.devices[0].recv_cpu_per_byte_s, 2e-9);
  EXPECT_EQ(a.devices[0].send_cpu_per_byte_s, 1e-9);
  EXPECT_TRUE(a.devices[0].has_cpu_quota);
  EXPECT_EQ(a.devices[0].fits.at("Conv").samples, 3);
  EXPECT_NEAR(a.devices[0].fits.at("Conv").per_mac_s, 1e-9, 1e-15);
  EXPECT_EQ(a.devices[0].fits.at("*").samples, 4);
  EXPECT_EQ(a.devices[1].fits.at("*").samples, 1);
  // The same sample measured again replaces the old one.
  Profile c;
  d.samples = {S("Gemm", 500, 0, 7e-6)};
  c.devices.push_back(d);
  MergeProfile(c, &a);
  EXPECT_EQ(a.devices[0].samples.size(), 4u);
  // Through a file and back.
  const std::string path = ::testing::TempDir() + "/merge_profile.json";
  ASSERT_TRUE(SaveProfile(a, path).ok());
  auto back = LoadProfile(path);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->devices[0].samples.size(), 4u);
  EXPECT_NEAR(back->devices[0].cpu_quota.quota_s, 0.0012, 1e-12);
  EXPECT_EQ(back->devices[0].send_cpu_s, 3e-4);
  EXPECT_EQ(back->devices[0].recv_cpu_s, 2e-4);
  EXPECT_EQ(back->devices[0].recv_cpu_per_byte_s, 2e-9);
  EXPECT_EQ(back->devices[0].send_cpu_per_byte_s, 1e-9);
  EXPECT_EQ(back->devices[0].idle_cpu_per_s, 1e-3);
  double alone = 0;
  for (const auto& x : back->devices[0].samples) alone += x.alone_seconds;
  EXPECT_EQ(alone, 9e-6);
  double alone_cpu = 0;
  for (const auto& x : back->devices[0].samples)
    alone_cpu += x.alone_cpu_seconds;
  EXPECT_EQ(alone_cpu, 4e-6);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace shoal
