#include "cluster/power.h"

#include <gtest/gtest.h>

#include "cluster/cluster.h"

namespace shoal {
namespace {

TEST(ParseCluster, PowerBlockOverridesThePi3Figures) {
  auto c = ParseCluster(R"(devices:
  - {name: a}
  - {name: b, power: {busy: 6.4W}}
  - {name: c, power: {idle: 950mW, busy: 2, send: 120nJ/B, receive: 0.03uJ/B}}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& d = c->devices;
  EXPECT_FALSE(d[0].power.given);
  EXPECT_DOUBLE_EQ(d[0].power.idle_w, Pi3Power().idle_w);
  EXPECT_DOUBLE_EQ(d[0].power.busy_w, Pi3Power().busy_w);
  EXPECT_TRUE(d[1].power.given);
  EXPECT_DOUBLE_EQ(d[1].power.idle_w, 1.22) << "left out: the Pi 3's";
  EXPECT_DOUBLE_EQ(d[1].power.busy_w, 6.4);
  EXPECT_DOUBLE_EQ(d[2].power.idle_w, 0.95);
  EXPECT_DOUBLE_EQ(d[2].power.busy_w, 2);
  EXPECT_DOUBLE_EQ(d[2].power.send_j_per_byte, 120e-9);
  EXPECT_DOUBLE_EQ(d[2].power.receive_j_per_byte, 30e-9);
}

TEST(ParseCluster, BadPowerNamesTheDeviceAndTheField) {
  struct Case {
    const char* block;
    const char* says;
  };
  for (const Case& k :
       {Case{"{idle: lots}", "power idle"}, Case{"{busy: 3.95V}", "power busy"},
        Case{"{idle: 4W, busy: 3W}", "below idle"},
        Case{"{idle: 3950000}", "10kW"}, Case{"{send: 1J/B}", "1mJ/B"},
        Case{"{receive: -2nJ/B}", "power receive"},
        Case{"{watts: 3}", "unknown key 'watts'"},
        Case{"3.95W", "must be a map"}}) {
    auto c = ParseCluster(
        std::string("devices:\n  - {name: pi7, power: ") + k.block + "}\n",
        "test");
    ASSERT_FALSE(c.ok()) << k.block;
    const std::string m = c.status().message();
    EXPECT_NE(m.find("pi7"), std::string::npos) << m;
    EXPECT_NE(m.find(k.says), std::string::npos) << k.block << ": " << m;
  }
}

TEST(EnergyPerInference, IdleOverTheWallBusyExtraAndBytes) {
  PowerSpec p{1.0, 3.0, 100e-9, 50e-9, true, ""};
  // 10 inferences in 2 s, 0.5 s of it computing, 10 MB out, 20 MB in.
  DeviceEnergy e = EnergyPerInference(p, 2.0, 0.5, 10'000'000, 20'000'000, 10);
  EXPECT_DOUBLE_EQ(e.idle_j, 0.2);
  EXPECT_DOUBLE_EQ(e.compute_j, 0.1);
  EXPECT_DOUBLE_EQ(e.network_j, (1.0 + 1.0) / 10);
  EXPECT_DOUBLE_EQ(e.total(), 0.5);
  // A worker's parallel cores can count more busy time than wall time:
  // power saturates at busy.
  EXPECT_DOUBLE_EQ(EnergyPerInference(p, 1.0, 3.0, 0, 0, 1).compute_j, 2.0);
  EXPECT_DOUBLE_EQ(EnergyPerInference(p, 1.0, 0.5, 0, 0, 0).total(), 0.0);
}

}  // namespace
}  // namespace shoal
