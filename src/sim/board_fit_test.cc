#include "sim/board_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "graph/shape_inference.h"
#include "models/zoo.h"
#include "sim/latency_model.h"

namespace shoal {
namespace {

// The table in cluster/board.cc holds what the fit gives: a change to the
// cost of a node (BoardNodeSeconds, an op's MacKind) or to the published
// figures shows here until the table is refitted (`shoal boards --fit`).
TEST(BoardFit, TableHoldsTheFit) {
  // Compared by what they predict, not rate by rate: six models leave the
  // step's cost and the GEMM rate partly interchangeable.
  for (const BoardClass& b : BoardClasses()) {
    if (!b.fitted) continue;
    SCOPED_TRACE(b.name);
    auto f = FitBoardRates(b.name);
    ASSERT_TRUE(f.ok()) << f.status().message();
    auto table = CheckBoard(b.name, b.rates);
    auto fit = CheckBoard(b.name, *f);
    ASSERT_TRUE(table.ok() && fit.ok());
    for (size_t i = 0; i < table->size(); ++i) {
      EXPECT_NEAR((*table)[i].predicted_ms / (*fit)[i].predicted_ms, 1, 0.02)
          << (*table)[i].model;
    }
  }
}

// Each fitted class predicts every published model within 30 %, and half of
// them within 10 %.
TEST(BoardFit, ClassesPredictThePublishedTimes) {
  int classes = 0;
  for (const BoardClass& b : BoardClasses()) {
    if (!b.fitted) continue;
    SCOPED_TRACE(b.name);
    ++classes;
    auto rows = CheckBoard(b.name, b.rates);
    ASSERT_TRUE(rows.ok()) << rows.status().message();
    ASSERT_GE(rows->size(), 5u);
    std::vector<double> errors;
    for (const auto& r : *rows) {
      EXPECT_LT(std::abs(r.error()), 0.30)
          << r.model << ": published " << r.published_ms << " ms, predicted "
          << r.predicted_ms;
      errors.push_back(std::abs(r.error()));
    }
    std::sort(errors.begin(), errors.end());
    EXPECT_LT(errors[errors.size() / 2], 0.10);
  }
  EXPECT_EQ(classes, 3);
}

TEST(BoardFit, PublishedFiguresAreThoseOfTheReference) {
  // A few of ncnn's published figures (its benchmark/README.md), read back.
  auto find = [](const std::string& board, const std::string& model) {
    for (const auto& t : NcnnPublishedTimes()) {
      if (t.board == board && t.model == model) return t.ms;
    }
    return 0.0;
  };
  EXPECT_DOUBLE_EQ(find("pi3b+", "vgg16"), 1902.28);
  EXPECT_DOUBLE_EQ(find("pi3b+", "alexnet"), 159.09);
  EXPECT_DOUBLE_EQ(find("pi4b", "resnet50"), 262.83);
  for (const auto& t : NcnnPublishedTimes()) {
    EXPECT_NE(FindBoard(t.board), nullptr) << t.board;
    EXPECT_NE(Zoo::Global().Find(t.model), nullptr) << t.model;
  }
}

// The planner's and simulator's price of a whole model on a board device is
// the class's prediction: one cost model.
TEST(BoardFit, LatencyModelPricesABoardByItsClass) {
  auto c = ParseCluster(
      "devices:\n  - {name: a, board: pi3b+}\n  - {name: b, board: pi3b+, "
      "speed: 2}\n",
      "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const LatencyModel m = LatencyModel::FromCluster(*c);
  const ZooEntry* e = Zoo::Global().Find("resnet18");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  ASSERT_TRUE(InferShapes(&*g).ok());
  auto one = m.GraphSeconds(0, *g);
  auto twice = m.GraphSeconds(1, *g);
  ASSERT_TRUE(one.ok() && twice.ok());
  auto ms = PredictModelMs(FindBoard("pi3b+")->rates, "resnet18");
  ASSERT_TRUE(ms.ok());
  EXPECT_NEAR(*one * 1e3, *ms, 1e-6 * *ms);
  EXPECT_NEAR(*twice * 2, *one, 1e-9) << "speed 2: half the time";
  EXPECT_DOUBLE_EQ(m.MacsPerSecond(0),
                   FindBoard("pi3b+")->rates.gemm_macs_per_s);
}

}  // namespace
}  // namespace shoal
