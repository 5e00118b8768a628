// serve's log lines: the text form a person reads (UTC time to the
// millisecond, a level, "serve:") and the JSON form a machine reads (each
// line one object that parses, with ts, level, msg and the fields), whole
// when threads log at once.
#include "serve/serve_log.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <thread>

namespace shoal {
namespace {

using std::chrono::milliseconds;
using std::chrono::system_clock;

// 2026-11-29T03:31:29.123Z
const system_clock::time_point kT =
    system_clock::time_point(milliseconds(int64_t{1795923089} * 1000 + 123));

// Routes the serve log to a vector for a test, and back to stderr as text
// after it.
struct CapturedLog {
  std::mutex mu;
  std::vector<std::string> lines;
  explicit CapturedLog(LogFormat f) {
    SetServeLogFormat(f);
    SetServeLogSink([this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    });
  }
  ~CapturedLog() {
    SetServeLogSink(nullptr);
    SetServeLogFormat(LogFormat::kText);
  }
};

TEST(ServeLog, TimeIsUtcIso8601WithMilliseconds) {
  EXPECT_EQ(IsoUtcMillis(kT), "2026-11-29T03:31:29.123Z");
  EXPECT_EQ(IsoUtcMillis(system_clock::time_point(milliseconds(7))),
            "1970-01-01T00:00:00.007Z");
  // Before 1970 the milliseconds still count up within their second.
  EXPECT_EQ(IsoUtcMillis(system_clock::time_point(milliseconds(-1))),
            "1969-12-31T23:59:59.999Z");
}

TEST(ServeLog, TextLineHasTimeLevelAndMessage) {
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kT, LogLevel::kInfo,
                          "listening on 127.0.0.1:7600 (port 7600)",
                          {{"port", 7600}}),
            "2026-11-29T03:31:29.123Z INFO serve: listening on "
            "127.0.0.1:7600 (port 7600)");
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kT, LogLevel::kWarn, "a", {}),
            "2026-11-29T03:31:29.123Z WARN serve: a");
  EXPECT_EQ(FormatLogLine(LogFormat::kText, kT, LogLevel::kError, "b", {}),
            "2026-11-29T03:31:29.123Z ERROR serve: b");
}

TEST(ServeLog, JsonLineParsesWithItsFields) {
  const std::string line = FormatLogLine(
      LogFormat::kJson, kT, LogLevel::kError, "request 7 failed: \"x\"\n",
      {{"request", 7}, {"error", "x"}, {"level", "not this"}});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;  // one line
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["ts"], "2026-11-29T03:31:29.123Z");
  EXPECT_EQ(j["level"], "ERROR");  // a field does not replace it
  EXPECT_EQ(j["msg"], "request 7 failed: \"x\"\n");
  EXPECT_EQ(j["request"], 7);
  EXPECT_EQ(j["error"], "x");
  EXPECT_EQ(j.size(), 5u);
  // ts, level and msg lead the line, for a person reading it raw.
  EXPECT_EQ(line.rfind("{\"ts\":\"2026-11-29T03:31:29.123Z\",\"level\":"
                       "\"ERROR\",\"msg\":",
                       0),
            0u)
      << line;
}

TEST(ServeLog, JsonLineStaysValidWithBytesThatAreNotUtf8) {
  const std::string line =
      FormatLogLine(LogFormat::kJson, kT, LogLevel::kWarn,
                    std::string("cannot read \xff\xfe.yaml"), {});
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["msg"].get<std::string>().rfind("cannot read ", 0), 0u);
}

TEST(ServeLog, FormatIsTextOrJson) {
  EXPECT_EQ(ParseLogFormat("text").value(), LogFormat::kText);
  EXPECT_EQ(ParseLogFormat("json").value(), LogFormat::kJson);
  auto bad = ParseLogFormat("yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("text or json"), std::string::npos);
}

TEST(ServeLog, LinesGoToTheSinkInTheFormatSet) {
  {
    CapturedLog log(LogFormat::kText);
    ServeLog(LogLevel::kWarn, "device %s lost", "pi1");
    ASSERT_EQ(log.lines.size(), 1u);
    const std::regex text(
        "\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z WARN serve: "
        "device pi1 lost");
    EXPECT_TRUE(std::regex_match(log.lines[0], text)) << log.lines[0];
  }
  CapturedLog log(LogFormat::kJson);
  ServeLogWith(LogLevel::kInfo, {{"generation", 3}}, "generation %d", 3);
  ASSERT_EQ(log.lines.size(), 1u);
  const auto j = nlohmann::json::parse(log.lines[0]);
  EXPECT_EQ(j["level"], "INFO");
  EXPECT_EQ(j["msg"], "generation 3");
  EXPECT_EQ(j["generation"], 3);
}

// Threads logging at once: every line whole, each one parses.
TEST(ServeLog, ConcurrentLinesStayWhole) {
  CapturedLog log(LogFormat::kJson);
  constexpr int kThreads = 4, kEach = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kEach; ++i) {
        ServeLogWith(LogLevel::kInfo, {{"thread", t}, {"i", i}},
                     "thread %d line %d", t, i);
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(log.lines.size(), size_t{kThreads * kEach});
  std::set<std::pair<int, int>> seen;
  for (const auto& l : log.lines) {
    const auto j = nlohmann::json::parse(l);
    const int t = j["thread"], i = j["i"];
    EXPECT_EQ(j["msg"],
              "thread " + std::to_string(t) + " line " + std::to_string(i));
    seen.insert({t, i});
  }
  EXPECT_EQ(seen.size(), size_t{kThreads * kEach});
}

}  // namespace
}  // namespace shoal
