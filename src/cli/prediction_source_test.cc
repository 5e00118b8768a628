#include "cli/prediction_source.h"

#include <gtest/gtest.h>

#include <sstream>

#include "cli/bench_report.h"

namespace shoal {
namespace {

Cluster Parse(const std::string& yaml) {
  auto c = ParseCluster(yaml, "test");
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? *c : Cluster{};
}

TEST(PredictionSource, BoardsRunToTheirRatesAndOtherDevicesAreGuesses) {
  // Every device a board priced by its rates: the note on boards.
  const Cluster boards = Parse(
      "devices:\n"
      "  - {name: a, address: '127.0.0.1:7000', board: pi4b}\n"
      "  - {name: b, address: '127.0.0.1:7001', board: pi3b+, speed: 0.8}\n");
  EXPECT_STREQ(SpecSourceOf(boards), kBoardSource);
  EXPECT_STREQ(SpecNoteOf(SpecSourceOf(boards)), kBoardPredictionNote);
  // One device given by speed, or the LCP paper's Pi 3 (priced per MAC and
  // emulated by a share of a core): the cluster's note, as before.
  const Cluster mixed = Parse(
      "devices:\n"
      "  - {name: a, address: '127.0.0.1:7000', board: pi4b}\n"
      "  - {name: b, address: '127.0.0.1:7001', speed: 2}\n");
  EXPECT_STREQ(SpecSourceOf(mixed), kSpecSource);
  const Cluster lcp = Parse(
      "devices:\n"
      "  - {name: a, address: '127.0.0.1:7000', board: pi3-lcp}\n");
  EXPECT_STREQ(SpecSourceOf(lcp), kSpecSource);
  EXPECT_STREQ(SpecNoteOf(kSpecSource), kSpecPredictionNote);
  EXPECT_STREQ(SpecSourceOf(Cluster{}), kSpecSource);
  // A profile's prediction gets no note.
  EXPECT_EQ(SpecNoteOf("profile p.json"), nullptr);
}

TEST(PredictionSource, SimulateReportPrintsTheNoteOfItsSource) {
  BenchReport r;
  r.plan = "p.json";
  r.cluster = "c.yaml";
  r.requests = 1;
  r.concurrency = 1;
  r.latency_ms = {10};
  r.wall_s = 0.01;
  r.predicted = true;
  r.source = kBoardSource;
  std::ostringstream board;
  PrintBenchReport(r, board);
  EXPECT_NE(board.str().find("PREDICTED from the board classes' rates"),
            std::string::npos)
      << board.str();
  EXPECT_NE(board.str().find(kBoardPredictionNote), std::string::npos);
  EXPECT_EQ(board.str().find(kSpecPredictionNote), std::string::npos);
  r.source = "profile p.json";
  std::ostringstream profiled;
  PrintBenchReport(r, profiled);
  EXPECT_EQ(profiled.str().find("note: predicted"), std::string::npos)
      << profiled.str();
}

}  // namespace
}  // namespace shoal
