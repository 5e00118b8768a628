#include "cluster/cluster_writer.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace shoal {
namespace {

void ExpectSameCluster(const Cluster& a, const Cluster& b) {
  EXPECT_EQ(a.tls.ca, b.tls.ca);
  EXPECT_EQ(a.tls.cert, b.tls.cert);
  EXPECT_EQ(a.tls.key, b.tls.key);
  EXPECT_EQ(a.tls.crl, b.tls.crl);
  EXPECT_EQ(a.tls_dir, b.tls_dir);
  ASSERT_EQ(a.devices.size(), b.devices.size());
  for (size_t i = 0; i < a.devices.size(); ++i) {
    const DeviceSpec &x = a.devices[i], &y = b.devices[i];
    SCOPED_TRACE(x.name);
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.address, y.address);
    EXPECT_EQ(x.memory_bytes, y.memory_bytes);
    EXPECT_EQ(x.cores, y.cores);
    EXPECT_DOUBLE_EQ(x.speed, y.speed);
    EXPECT_EQ(x.board, y.board);
    EXPECT_EQ(x.board_speed, y.board_speed);
    EXPECT_EQ(x.cpu, y.cpu);
    EXPECT_EQ(x.cpu_from_speed, y.cpu_from_speed);
    EXPECT_EQ(x.system_cpu, y.system_cpu);
    // Links read back within rounding: "8.83ms" is 8.83 x 1e-3.
    EXPECT_DOUBLE_EQ(x.link.bandwidth_bps, y.link.bandwidth_bps);
    EXPECT_DOUBLE_EQ(x.link.latency_s, y.link.latency_s);
    EXPECT_EQ(x.power.given, y.power.given);
    EXPECT_EQ(x.power.idle_w, y.power.idle_w);
    EXPECT_EQ(x.power.busy_w, y.power.busy_w);
    EXPECT_DOUBLE_EQ(x.power.send_j_per_byte, y.power.send_j_per_byte);
    EXPECT_DOUBLE_EQ(x.power.receive_j_per_byte, y.power.receive_j_per_byte);
    EXPECT_EQ(x.tls.ca, y.tls.ca);
    EXPECT_EQ(x.tls.cert, y.tls.cert);
    EXPECT_EQ(x.tls.key, y.tls.key);
  }
}

TEST(FormatCluster, EveryExampleReadsBackEqual) {
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(SHOAL_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".yaml") continue;
    SCOPED_TRACE(e.path().string());
    auto c = LoadCluster(e.path().string());
    ASSERT_TRUE(c.ok()) << c.status().message();
    const std::string text = FormatCluster(*c);
    auto back = ParseCluster(text, "written");
    ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
    ExpectSameCluster(*c, *back);
    ++files;
  }
  EXPECT_GE(files, 3);
}

TEST(FormatCluster, EveryFieldAndDefaultReadsBackEqual) {
  Cluster c;
  c.tls = TlsPaths{"/etc/shoal/ca.crt", "/etc/shoal/laptop.crt",
                   "/etc/shoal/laptop key.key", "/etc/shoal/crl.pem"};
  auto dev = [](const std::string& name) {
    DeviceSpec d;
    d.name = name;
    d.address = name + ".local:7000";
    return d;
  };
  DeviceSpec plain = dev("plain");  // every default
  DeviceSpec full = dev("full");
  full.memory_bytes = 1500000;
  full.cores = 4;
  full.speed = 2.5;
  full.cpu = 0.125;
  full.system_cpu = 0.3;
  full.link = Link{62.24e6, 8.83e-3};
  full.tls =
      TlsPaths{c.tls.ca, "/etc/shoal/full.crt", "/etc/shoal/full.key", ""};
  full.power = PowerSpec{0.95, 6.4, 1.25e-7, 3.3e-8, true, ""};
  DeviceSpec auto_cpu = dev("auto_cpu");  // speed 1, calibrated
  auto_cpu.cpu_from_speed = true;
  DeviceSpec calibrated = dev("calibrated");  // speed 3, calibrated
  calibrated.speed = 3;
  calibrated.cpu_from_speed = true;
  DeviceSpec unlimited = dev("unlimited");  // speed 3, cpu 0 given
  unlimited.speed = 3;
  DeviceSpec odd = dev("odd");
  odd.link = Link{1e13, 2.5};
  odd.memory_bytes = int64_t{3} << 29;  // 1.5 GiB
  // A named board at 1.5 times its class, on its class's defaults but a
  // slower link.
  DeviceSpec board = dev("board");
  board.board = FindBoard("pi4b");
  ASSERT_NE(board.board, nullptr);
  board.board_speed = 1.5;
  board.speed = RelativeSpeed(*board.board) * 1.5;
  board.cores = board.board->cores;
  board.memory_bytes = board.board->memory_bytes;
  board.link = Link{100e6, board.board->link_latency_s};
  board.power = board.board->power;
  c.devices = {plain, full, auto_cpu, calibrated, unlimited, odd, board};
  const std::string text = FormatCluster(c, "found by a test\nsecond line");
  EXPECT_EQ(text.rfind("# found by a test\n# second line\n", 0), 0u) << text;
  auto back = ParseCluster(text, "written");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  ExpectSameCluster(c, *back);
}

TEST(FormatCluster, TlsDirStaysADir) {
  auto c = ParseCluster(R"(tls: {dir: certs}
devices:
  - {name: a, address: 10.0.0.2:7000}
  - {name: b, address: 10.0.0.3:7000, tls: {cert: other/b.crt, key: other/b.key}}
)",
                        "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::string text = FormatCluster(*c);
  EXPECT_NE(text.find("tls: {dir: certs}"), std::string::npos) << text;
  EXPECT_EQ(text.find("a.crt"), std::string::npos) << text;
  auto back = ParseCluster(text, "written");
  ASSERT_TRUE(back.ok()) << back.status().message() << "\n" << text;
  ExpectSameCluster(*c, *back);
}

TEST(FormatUnits, ReadableWhereExact) {
  EXPECT_EQ(FormatBytes(int64_t{1} << 30), "1GiB");
  EXPECT_EQ(FormatBytes(int64_t{512} << 20), "512MiB");
  EXPECT_EQ(FormatBytes(1500000), "1500000");
  EXPECT_EQ(FormatBitRate(62e6), "62Mbit");
  EXPECT_EQ(FormatBitRate(1e9), "1Gbit");
  EXPECT_EQ(FormatDuration(9e-3), "9ms");
  EXPECT_EQ(FormatDuration(2), "2s");
  EXPECT_EQ(FormatDuration(8.83e-3), "8.83ms");
  EXPECT_EQ(FormatDuration(0.4e-3), "400us");
  // No short form: every digit, in the base unit.
  EXPECT_EQ(FormatBitRate(1234567.25), "1234567.25bit");
  for (double v : {62.24e6, 1234.5, 3e3, 1234567.25}) {
    auto back = ParseBitRate(FormatBitRate(v));
    ASSERT_TRUE(back.ok()) << FormatBitRate(v);
    EXPECT_DOUBLE_EQ(*back, v) << FormatBitRate(v);
  }
  for (double v : {8.83e-3, 0.4e-3, 1e-7, 0.1, 1.0 / 3}) {
    auto back = ParseDuration(FormatDuration(v));
    ASSERT_TRUE(back.ok()) << FormatDuration(v);
    EXPECT_DOUBLE_EQ(*back, v) << FormatDuration(v);
  }
}

TEST(WriteClusterFile, NamesAFileItCannotWrite) {
  Cluster c = EqualCluster(1);
  Status s = WriteClusterFile(c, "/nonexistent-dir/cluster.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/cluster.yaml"),
            std::string::npos)
      << s.message();
}

}  // namespace
}  // namespace shoal
