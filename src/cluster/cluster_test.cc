#include "cluster/cluster.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace shoal {
namespace {

TEST(ParseCluster, CpuFromSpeedUnlessGiven) {
  auto c = ParseCluster(R"(devices:
  - {name: a, address: 127.0.0.1:1, speed: 2}
  - {name: b, address: 127.0.0.1:2, speed: 2, cpu: 0.5}
  - {name: c, address: 127.0.0.1:3}
  - {name: d, address: 127.0.0.1:4, cpu: auto}
  - {name: e, address: 127.0.0.1:5, speed: 1, cpu: 0}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const auto& d = c->devices;
  EXPECT_TRUE(d[0].cpu_from_speed) << "a speed and no cpu: calibrated";
  EXPECT_FALSE(d[1].cpu_from_speed);
  EXPECT_DOUBLE_EQ(d[1].cpu, 0.5);
  EXPECT_FALSE(d[2].cpu_from_speed) << "neither: not limited";
  EXPECT_DOUBLE_EQ(d[2].cpu, 0);
  EXPECT_TRUE(d[3].cpu_from_speed) << "cpu: auto";
  EXPECT_FALSE(d[4].cpu_from_speed) << "cpu: 0 is explicit";
}

TEST(ParseCluster, BoardGivesItsClassDefaultsAndSpeedMultipliesIt) {
  auto c = ParseCluster(R"(devices:
  - {name: a, address: 127.0.0.1:1, board: pi3b+}
  - {name: b, address: 127.0.0.1:2, board: pi4b, speed: 0.5, memory: 2GiB,
     cores: 2, link: {latency: 1ms}, power: {busy: 5W}}
  - {name: c, address: 127.0.0.1:3, speed: 2}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const DeviceSpec& a = c->devices[0];
  ASSERT_NE(a.board, nullptr);
  EXPECT_EQ(a.board->name, "pi3b+");
  EXPECT_EQ(a.cores, 4);
  EXPECT_EQ(a.memory_bytes, int64_t{1} << 30);
  EXPECT_DOUBLE_EQ(a.link.bandwidth_bps, 62e6);
  EXPECT_DOUBLE_EQ(a.link.latency_s, 9e-3);
  EXPECT_DOUBLE_EQ(a.board_speed, 1);
  // Split sizes follow the class's rate against the LCP paper's Pi 3.
  EXPECT_DOUBLE_EQ(a.speed, RelativeSpeed(*a.board));
  EXPECT_GT(a.speed, 3) << "ncnn on a Pi 3B+ is several times TensorFlow";
  EXPECT_FALSE(a.cpu_from_speed) << "a board is paced by its class's times";
  const DeviceSpec& b = c->devices[1];
  ASSERT_NE(b.board, nullptr);
  EXPECT_EQ(b.memory_bytes, int64_t{2} << 30);
  EXPECT_EQ(b.cores, 2);
  EXPECT_DOUBLE_EQ(b.link.bandwidth_bps, 940e6) << "the class's";
  EXPECT_DOUBLE_EQ(b.link.latency_s, 1e-3) << "the file's";
  EXPECT_DOUBLE_EQ(b.power.idle_w, 2.7) << "the class's";
  EXPECT_DOUBLE_EQ(b.power.busy_w, 5) << "the file's";
  EXPECT_DOUBLE_EQ(b.board_speed, 0.5);
  EXPECT_DOUBLE_EQ(b.speed, RelativeSpeed(*b.board) * 0.5);
  const DeviceSpec& old = c->devices[2];
  EXPECT_EQ(old.board, nullptr) << "speed without a board: as before";
  EXPECT_DOUBLE_EQ(old.speed, 2);
  EXPECT_TRUE(old.cpu_from_speed);
}

TEST(ParseCluster, UnknownBoardNamesTheKnownOnes) {
  auto c = ParseCluster("devices:\n  - {name: a, board: pi9}\n", "test");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("board 'pi9' is not a known class"),
            std::string::npos)
      << c.status().message();
  EXPECT_NE(c.status().message().find("pi3b+, pi4b"), std::string::npos)
      << c.status().message();
}

TEST(ParseCluster, SharedMediumCostsTwiceTheAirtime) {
  auto c = ParseCluster(R"(network: {medium: shared, bandwidth: 62Mbit}
devices:
  - {name: a, link: {bandwidth: 62Mbit, latency: 9ms}}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->network.shared);
  EXPECT_DOUBLE_EQ(c->network.bandwidth_bps, 62e6);
  // Up to the access point and down again.
  EXPECT_DOUBLE_EQ(c->network.Airtime(7750000), 2.0);
  EXPECT_DOUBLE_EQ(c->devices[0].link.bandwidth_bps, 62e6) << "kept";
  auto plain = ParseCluster("devices:\n  - {name: a}\n", "test");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->network.shared);
  EXPECT_DOUBLE_EQ(plain->network.Airtime(1000), 0);
  auto links = ParseCluster(
      "network: {medium: links}\ndevices:\n  - {name: a}\n", "test");
  ASSERT_TRUE(links.ok()) << links.status().message();
  EXPECT_FALSE(links->network.shared);
}

TEST(ParseCluster, BadNetworkSaysWhatIsWrong) {
  for (const auto& [block, says] :
       std::vector<std::pair<std::string, std::string>>{
           {"network: {medium: shared}", "needs a bandwidth"},
           {"network: {medium: air, bandwidth: 1Mbit}", "medium 'air'"},
           {"network: {medium: shared, bandwidth: fast}", "not a bandwidth"},
           {"network: {medium: shared, bandwidth: 0Mbit}", "within 1Kbit"},
           {"network: {medium: links, bandwidth: 1Mbit}", "each device's link"},
           {"network: {medium: shared, bandwith: 1Mbit}", "unknown key"},
           {"network: shared", "must be a map"}}) {
    auto c = ParseCluster(block + "\ndevices:\n  - {name: a}\n", "test");
    ASSERT_FALSE(c.ok()) << block;
    EXPECT_NE(c.status().message().find(says), std::string::npos)
        << block << ": " << c.status().message();
    EXPECT_NE(c.status().message().find("network"), std::string::npos)
        << c.status().message();
  }
}

TEST(ParseCluster, BadCpuNamesTheDevice) {
  auto c = ParseCluster("devices:\n  - {name: pi7, cpu: fast}\n", "test");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("device 0"), std::string::npos)
      << c.status().message();
}

TEST(ParseCluster, SystemCpuIsAtLeastCpuInTheQuota) {
  auto c = ParseCluster(R"(devices:
  - {name: a, address: 127.0.0.1:1, cpu: 0.02, system_cpu: 0.05}
  - {name: b, address: 127.0.0.1:2, cpu: 0.3, system_cpu: 0.05}
  - {name: c, address: 127.0.0.1:3, cpu: 0.3}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_DOUBLE_EQ(c->devices[0].QuotaCpu(), 0.05);
  EXPECT_DOUBLE_EQ(c->devices[1].QuotaCpu(), 0.3);
  EXPECT_DOUBLE_EQ(c->devices[2].QuotaCpu(), 0.3);
  for (const char* bad : {"-1", ".nan", "2000", "lots"}) {
    auto e = ParseCluster(
        std::string("devices:\n  - {name: pi7, system_cpu: ") + bad + "}\n",
        "test");
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_NE(e.status().message().find("device 0"), std::string::npos)
        << e.status().message();
  }
}

// The tls block: a certs directory gives the coordinator's files and each
// device's, relative to the cluster file; files named one by one override.
TEST(LoadCluster, TlsPathsAreRelativeToTheFile) {
  char tmpl[] = "/tmp/shoal-cluster-tls-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string path = dir + "/c.yaml";
  std::ofstream(path) << R"(tls: {dir: certs, key: /etc/k.key}
devices:
  - {name: a, address: 127.0.0.1:1}
  - {name: b, address: 127.0.0.1:2, tls: {cert: b2.crt}}
)";
  auto c = LoadCluster(path);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tls_dir, dir + "/certs");
  EXPECT_EQ(c->tls.ca, dir + "/certs/ca.crt");
  EXPECT_EQ(c->tls.cert, dir + "/certs/coordinator.crt");
  EXPECT_EQ(c->tls.key, "/etc/k.key");
  EXPECT_EQ(c->devices[0].tls.cert, dir + "/certs/a.crt");
  EXPECT_EQ(c->devices[0].tls.key, dir + "/certs/a.key");
  EXPECT_EQ(c->devices[0].tls.ca, dir + "/certs/ca.crt");
  EXPECT_EQ(c->devices[1].tls.cert, dir + "/b2.crt");
}

// The revocation list: named, relative to the file and shared by the
// devices; or, under `tls: {dir}`, the directory's crl.pem once it exists.
TEST(LoadCluster, TheRevocationListIsNamedOrFoundInTheCertsDirectory) {
  char tmpl[] = "/tmp/shoal-cluster-crl-XXXXXX";
  const std::string dir = mkdtemp(tmpl);
  const std::string named = dir + "/named.yaml", in_dir = dir + "/dir.yaml";
  std::ofstream(named)
      << R"(tls: {ca: ca.crt, cert: c.crt, key: c.key, crl: lists/crl.pem}
devices:
  - {name: a, address: 127.0.0.1:1, tls: {cert: a.crt, key: a.key}}
)";
  std::ofstream(in_dir) << R"(tls: {dir: certs}
devices:
  - {name: a, address: 127.0.0.1:1}
)";
  auto c = LoadCluster(named);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tls.crl, dir + "/lists/crl.pem");
  EXPECT_EQ(c->devices[0].tls.crl, dir + "/lists/crl.pem");

  auto none = LoadCluster(in_dir);
  ASSERT_TRUE(none.ok()) << none.status().message();
  EXPECT_EQ(none->tls.crl, "");
  std::filesystem::create_directories(dir + "/certs");
  std::ofstream(dir + "/certs/crl.pem") << "";
  auto found = LoadCluster(in_dir);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(found.ok()) << found.status().message();
  EXPECT_EQ(found->tls.crl, dir + "/certs/crl.pem");
  EXPECT_EQ(found->devices[0].tls.crl, dir + "/certs/crl.pem");
}

TEST(ParseCluster, BadTlsBlocksAreRefused) {
  auto typo = ParseCluster(
      "tls: {dir: certs, crt: x}\ndevices:\n  - {name: a}\n", "test");
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("'crt'"), std::string::npos)
      << typo.status().message();
  auto partial =
      ParseCluster("tls: {ca: ca.crt}\ndevices:\n  - {name: a}\n", "test");
  ASSERT_FALSE(partial.ok());
  EXPECT_NE(partial.status().message().find("ca, cert and key"),
            std::string::npos);
  auto device_only = ParseCluster(
      "devices:\n  - {name: a, tls: {cert: a.crt, key: a.key}}\n", "test");
  ASSERT_FALSE(device_only.ok());
  EXPECT_NE(device_only.status().message().find("(a)"), std::string::npos)
      << device_only.status().message();
  auto plain = ParseCluster("devices:\n  - {name: a}\n", "test");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls.any());
  EXPECT_FALSE(plain->devices[0].tls.any());
}

}  // namespace
}  // namespace shoal
