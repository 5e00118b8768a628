#include "plan/trace.h"

#include <gtest/gtest.h>

#include <fstream>

namespace shoal {
namespace {

// Two devices, task a on the first, b on the second; a's output goes to b
// (transfer 1), b's to the coordinator (transfer 2).
Plan TwoDevices() {
  Plan p;
  p.devices = {PlanDevice{"pi3a", 1.0, 0}, PlanDevice{"pi3b", 1.0, 0}};
  for (int i = 0; i < 2; ++i) {
    Task t;
    t.id = i;
    t.name = i == 0 ? "a" : "b";
    t.devices = {i};
    p.tasks.push_back(t);
  }
  auto move = [](int src, int dst) {
    Transfer x;
    x.src = Endpoint{src, "y", Region::Full({1, 16})};
    x.dst = Endpoint{dst, "x", Region::Full({1, 16})};
    return x;
  };
  p.transfers = {move(kModelInput, 0), move(0, 1), move(1, kModelOutput)};
  return p;
}

TEST(Trace, OneProcessPerDeviceAndSpansFromTheEarliest) {
  const Plan p = TwoDevices();
  using K = TraceSpan::Kind;
  const std::vector<TraceSpan> spans = {
      {K::kRequest, -1, 1, -1, 10.0, 10.0, 10.5},
      {K::kTask, 0, 1, 0, 10.001, 10.002, 10.2},
      {K::kSend, 0, 1, 1, 10.2, 10.2, 10.25},
      {K::kSend, 1, 1, 2, 10.4, 10.41, 10.49},
  };
  const nlohmann::json j = ChromeTrace(p, spans);
  std::map<int, std::string> process;
  std::vector<nlohmann::json> x;
  for (const auto& e : j.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") {
      process[e.at("pid").get<int>()] = e.at("args").at("name");
    } else if (e.at("ph") == "X") {
      x.push_back(e);
    }
  }
  EXPECT_EQ(process, (std::map<int, std::string>{
                         {0, "coordinator"}, {1, "pi3a"}, {2, "pi3b"}}));
  ASSERT_EQ(x.size(), 4u);
  EXPECT_EQ(x[0].at("name"), "request 1");
  EXPECT_DOUBLE_EQ(x[0].at("ts").get<double>(), 0);
  EXPECT_NEAR(x[0].at("dur").get<double>(), 500000, 1e-3);
  EXPECT_EQ(x[1].at("name"), "a");
  EXPECT_EQ(x[1].at("pid"), 1);
  EXPECT_NEAR(x[1].at("ts").get<double>(), 2000, 1e-3);
  EXPECT_NEAR(x[1].at("args").at("queued_ms").get<double>(), 1, 1e-6);
  EXPECT_EQ(x[2].at("name"), "to pi3b");
  EXPECT_EQ(x[2].at("args").at("bytes"), 64);
  EXPECT_EQ(x[3].at("name"), "to coordinator");
  EXPECT_EQ(x[3].at("pid"), 2);
  EXPECT_NE(x[1].at("tid"), x[2].at("tid"));  // compute and send lanes
}

TEST(Trace, AnUnwritablePathIsNamed) {
  const Status s = WriteTrace("/nonexistent-dir/t.json", TwoDevices(), {});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/t.json"), std::string::npos);
}

}  // namespace
}  // namespace shoal
