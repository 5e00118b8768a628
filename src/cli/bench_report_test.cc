#include "cli/bench_report.h"

#include <gtest/gtest.h>

#include <sstream>

namespace shoal {
namespace {

BenchReport TwoDevices() {
  BenchReport r;
  r.plan = "p.json";
  r.cluster = "c.yaml";
  r.requests = 4;
  r.concurrency = 1;
  r.latency_ms = {500, 500, 500, 500};
  r.wall_s = 2.0;
  BenchDeviceReport a, b;
  a.name = "a";
  a.busy_ms = 1000;
  a.bytes_sent = 4'000'000;
  b.name = "b";
  b.busy_ms = 400;
  b.bytes_received = 4'000'000;
  b.power = PowerSpec{2.0, 5.0, 0, 250e-9, true, ""};
  r.devices = {a, b};
  return r;
}

TEST(BenchReport, EnergyPerInferenceOfEachDeviceAndAll) {
  const nlohmann::json j = BenchReportJson(TwoDevices());
  const auto& a = j["devices"][0]["energy_j_per_inference"];
  const auto& b = j["devices"][1]["energy_j_per_inference"];
  // a: Pi 3 figures, 1.22 W over 2 s and 2.73 W more over 1 s, 4 requests.
  EXPECT_DOUBLE_EQ(a["idle"].get<double>(), 1.22 * 2 / 4);
  EXPECT_DOUBLE_EQ(a["compute"].get<double>(), (3.95 - 1.22) * 1 / 4);
  EXPECT_DOUBLE_EQ(a["network"].get<double>(), 0);
  EXPECT_EQ(a["power"], "Raspberry Pi 3 figures");
  // b: its own figures; 4 MB received at 250 nJ/B is 1 J over 4 requests.
  EXPECT_DOUBLE_EQ(b["idle"].get<double>(), 2.0 * 2 / 4);
  EXPECT_DOUBLE_EQ(b["compute"].get<double>(), 3.0 * 0.4 / 4);
  EXPECT_DOUBLE_EQ(b["network"].get<double>(), 0.25);
  EXPECT_EQ(b["power"], "cluster file");
  EXPECT_DOUBLE_EQ(j["energy_j_per_inference"].get<double>(),
                   a["total"].get<double>() + b["total"].get<double>());
  EXPECT_TRUE(j.contains("energy_note"));
  std::ostringstream text;
  PrintBenchReport(TwoDevices(), text);
  EXPECT_NE(text.str().find("J per inference, all devices"), std::string::npos)
      << text.str();
}

TEST(BenchReport, TextGivesBytesInHumanUnitsAndEqualLatenciesOneBar) {
  std::ostringstream text;
  PrintBenchReport(TwoDevices(), text);
  const std::string t = text.str();
  // 4 000 000 bytes sent over 4 requests.
  EXPECT_NE(t.find("3.8 MiB on the wire (976.6 KiB per request)"),
            std::string::npos)
      << t;
  EXPECT_EQ(t.find("4000000"), std::string::npos) << t;
  // Four latencies of 500 ms: one bar holding all four.
  EXPECT_NE(t.find("500.00 -    500.00 |" + std::string(40, '#') + " 4\n"),
            std::string::npos)
      << t;
}

// Emulated boards the host fell behind: counted over every device, their
// lateness summed per request, and said in the text; nothing said where
// the host kept up, and nothing of it in a prediction.
TEST(BenchReport, SaysWhereTheHostFellBehindTheBoards) {
  BenchReport r = TwoDevices();
  std::ostringstream kept;
  PrintBenchReport(r, kept);
  EXPECT_EQ(kept.str().find("host behind the boards"), std::string::npos)
      << kept.str();
  EXPECT_EQ(BenchReportJson(r)["board_late"]["tasks"], 0);
  r.devices[0].task_runs = 40;
  r.devices[0].board_late_tasks = 3;
  r.devices[0].board_late_task_ms = 6;
  r.devices[1].task_runs = 40;
  r.devices[1].messages_received = 20;
  r.devices[1].board_late_messages = 2;
  r.devices[1].board_late_message_ms = 2;
  const nlohmann::json b = BenchReportJson(r)["board_late"];
  EXPECT_EQ(b["tasks"], 3);
  EXPECT_EQ(b["task_runs"], 80);
  EXPECT_EQ(b["messages"], 2);
  EXPECT_EQ(b["messages_received"], 20);
  EXPECT_DOUBLE_EQ(b["ms_per_request"].get<double>(), (6.0 + 2.0) / 4);
  std::ostringstream behind;
  PrintBenchReport(r, behind);
  EXPECT_NE(behind.str().find("host behind the boards: 3 of 80 tasks ended "
                              "late and 2 of 20 messages came in late, by "
                              "2.00 ms of board time a request"),
            std::string::npos)
      << behind.str();
  EXPECT_EQ(BenchReportJson(r)["devices"][1]["board_late"]["messages"], 2);
  r.predicted = true;
  EXPECT_FALSE(BenchReportJson(r).contains("board_late"));
  EXPECT_FALSE(BenchReportJson(r)["devices"][1].contains("board_late"));
}

TEST(BenchReport, SetDevicePowerFollowsTheClusterByName) {
  Plan p;
  p.devices = {PlanDevice{"b", 1, 0}, PlanDevice{"a", 1, 0}};
  Cluster c;
  c.devices.resize(2);
  c.devices[0].name = "a";
  c.devices[1].name = "b";
  c.devices[1].power = PowerSpec{0.5, 0.9, 0, 0, true, ""};
  BenchReport r = TwoDevices();
  SetDevicePower(p, c, &r);
  EXPECT_TRUE(r.devices[0].power.given) << "plan device 0 is cluster's b";
  EXPECT_DOUBLE_EQ(r.devices[0].power.busy_w, 0.9);
  EXPECT_FALSE(r.devices[1].power.given);
  const nlohmann::json j = BenchReportJson(r);
  EXPECT_TRUE(j.contains("energy_note")) << "a has no power block";
}

}  // namespace
}  // namespace shoal
