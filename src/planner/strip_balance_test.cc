// Strips cut by finish time (planner/strip_balance.h): the rows a spatial
// plan is told to give each strip are the rows its strips compute, the plan
// stays exact, and on AlexNet over eight Pi 3B+ the moves pay.
#include "planner/strip_balance.h"

#include <gtest/gtest.h>

#include <functional>

#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/spatial_split.h"
#include "planner/pi_threes_test_util.h"
#include "planner/predict.h"

namespace shoal {
namespace {

using testing::PiThrees;

Model Load(const std::string& name, bool weights) {
  LoadOptions lo;
  lo.with_weights = weights;
  lo.fuse_batchnorm = true;
  return LoadModel(name, lo).value();
}

PlanOptions Spatial(PlanOptions po) {
  po.strategy = "spatial";
  return po;
}

// What auto balances by: the plan's predicted latency.
std::function<StatusOr<double>(const Plan&)> Latency(const PlanOptions& po) {
  return [model = po.latency](const Plan& p) -> StatusOr<double> {
    ASSIGN_OR_RETURN(Prediction pr, PredictPlan(p, *model));
    return pr.latency_s;
  };
}

// Strips of uneven rows, as named, and the plan still equals the model
// run whole.
TEST(StripBalance, NamedRowsCutTheStripsAndStayExact) {
  const Model m = Load("cifarnet", true);
  PlanOptions po = Spatial(PiThrees(4, "cifarnet"));
  auto chains = SpatialStripRows(m.graph, po);
  ASSERT_TRUE(chains.ok()) << chains.status().message();
  ASSERT_FALSE(chains->empty());
  for (const StripRows& c : *chains) {
    ASSERT_EQ(c.rows.size(), 4u) << c.chain;
    int64_t total = 0;
    for (int64_t r : c.rows) total += r;
    // The first strip gives all but one row to each of the others to the
    // last: the most uneven cut there is.
    std::vector<int64_t> uneven = {total - 3, 1, 1, 1};
    po.spatial_rows[c.chain] = uneven;
  }
  auto named = SpatialStripRows(m.graph, po);
  ASSERT_TRUE(named.ok()) << named.status().message();
  ASSERT_EQ(named->size(), chains->size());
  for (const StripRows& c : *named)
    EXPECT_EQ(c.rows, po.spatial_rows.at(c.chain)) << c.chain;
  EXPECT_TRUE(testing::RunPlanExact(m, po));
}

TEST(StripBalance, AStripOfNoRowsIsRefused) {
  const Model m = Load("cifarnet", false);
  PlanOptions po = Spatial(PiThrees(4, "cifarnet"));
  auto chains = SpatialStripRows(m.graph, po);
  ASSERT_TRUE(chains.ok()) << chains.status().message();
  ASSERT_FALSE(chains->empty());
  std::vector<int64_t> rows = chains->front().rows;
  rows[0] += rows[1];
  rows[1] = 0;
  po.spatial_rows[chains->front().chain] = rows;
  auto p = MakePlan(m.graph, po);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(
      p.status().message().find("spatial chain from " + chains->front().chain +
                                ": a strip of 0 rows"),
      std::string::npos)
      << p.status().message();
}

// AlexNet on eight Pi 3B+ over Wi-Fi, strips of its deepest chain
// recomputing a halo on one side or two and starting as the image reaches
// them: moving rows between strips is predicted faster, and what auto
// chooses is such a plan.
TEST(StripBalance, AlexNetOnEightPiThreesFinishesSooner) {
  const Model m = Load("alexnet", false);
  PlanOptions po = Spatial(PiThrees(8, "alexnet"));
  po.max_read_factor = 6;
  po.input_read_factor = 1.5;
  po.spatial_fc = SpatialFc::kLip;
  po.overlap_halos = false;
  const auto value = Latency(po);
  auto start_plan = MakePlan(m.graph, po);
  ASSERT_TRUE(start_plan.ok()) << start_plan.status().message();
  auto start = value(*start_plan);
  ASSERT_TRUE(start.ok()) << start.status().message();
  auto b = BalanceStrips(m.graph, po, *start, value, 400);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_GT(b->moves, 0);
  EXPECT_LT(b->value, *start * 0.99);
  EXPECT_LE(b->evaluations, 400);
  // The value it reports is the plan its options make.
  auto balanced = MakePlan(m.graph, b->options);
  ASSERT_TRUE(balanced.ok()) << balanced.status().message();
  auto again = value(*balanced);
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(*again, b->value);
  // Rows only moved: every chain still cuts all of its rows.
  auto was = SpatialStripRows(m.graph, po);
  auto now = SpatialStripRows(m.graph, b->options);
  ASSERT_TRUE(was.ok() && now.ok());
  ASSERT_EQ(was->size(), now->size());
  bool moved = false;
  for (size_t i = 0; i < was->size(); ++i) {
    int64_t a = 0, z = 0;
    for (int64_t r : (*was)[i].rows) a += r;
    for (int64_t r : (*now)[i].rows) z += r;
    EXPECT_EQ(a, z) << (*was)[i].chain;
    moved |= (*was)[i].rows != (*now)[i].rows;
  }
  EXPECT_TRUE(moved);

  auto chosen = MakePlan(m.graph, PiThrees(8, "alexnet"));
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  ASSERT_TRUE(chosen->prediction.has_value());
  const std::string& method = chosen->prediction->method;
  EXPECT_NE(method.find("-balanced"), std::string::npos) << method;
}

// The same on 2-D tiles, whose chain from conv2 reaches the 6x6 last map
// (fc6 multiplies each tile where it lies): a middle tile recomputes halo
// on four sides, a corner one on two, so shares moved between the chain's
// devices are predicted faster; the tiles still cut every row and column.
TEST(StripBalance, TilesOfAlexNetMoveSharesBetweenDevices) {
  const Model m = Load("alexnet", false);
  PlanOptions po = Spatial(PiThrees(8, "alexnet"));
  po.tiles = TileShape::k2D;
  po.max_read_factor = 6;
  po.input_read_factor = 1.5;
  po.spatial_fc = SpatialFc::kLipLastWhole;
  const auto value = Latency(po);
  auto start_plan = MakePlan(m.graph, po);
  ASSERT_TRUE(start_plan.ok()) << start_plan.status().message();
  auto start = value(*start_plan);
  ASSERT_TRUE(start.ok()) << start.status().message();
  auto b = BalanceStrips(m.graph, po, *start, value, 400);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_GT(b->moves, 0);
  EXPECT_LT(b->value, *start * 0.98);
  EXPECT_LE(b->evaluations, 400);
  EXPECT_FALSE(b->options.spatial_shares.empty());
  auto balanced = MakePlan(m.graph, b->options);
  ASSERT_TRUE(balanced.ok()) << balanced.status().message();
  auto again = value(*balanced);
  ASSERT_TRUE(again.ok());
  EXPECT_DOUBLE_EQ(*again, b->value);
  auto cuts = SpatialTileCuts(m.graph, b->options);
  ASSERT_TRUE(cuts.ok()) << cuts.status().message();
  ASSERT_FALSE(cuts->empty());
  for (const TileCut& c : *cuts) {
    auto layout = TileLayout(c.rows, c.cols, c.shares, c.tiles_per_band);
    ASSERT_TRUE(layout.ok()) << c.chain;
    int64_t cells = 0;
    for (const TileBounds& t : *layout) {
      cells += (t.row_end - t.row_begin) * (t.col_end - t.col_begin);
    }
    EXPECT_EQ(cells, c.rows * c.cols) << c.chain;
  }
}

// ResNet-50 on four Pi 4B over Gigabit Ethernet: seventeen chains, too
// many to move a row of each in turn within the budget; moving shares
// between neighbouring devices, every chain cut anew, pays (112.2 ms
// predicted, 109.5 balanced, when written).
TEST(StripBalance, ResNet50OnFourPiFoursMovesEveryChainAtOnce) {
  const Model m = Load("resnet50", false);
  PlanOptions po = Spatial(testing::Boards(4, "pi4b", "resnet50"));
  po.max_read_factor = 1.0;
  po.spatial_fc = SpatialFc::kLip;
  po.overlap_halos = false;
  const auto value = Latency(po);
  auto start_plan = MakePlan(m.graph, po);
  ASSERT_TRUE(start_plan.ok()) << start_plan.status().message();
  auto start = value(*start_plan);
  ASSERT_TRUE(start.ok()) << start.status().message();
  auto chains = SpatialStripRows(m.graph, po);
  ASSERT_TRUE(chains.ok());
  EXPECT_GE(chains->size(), 16u);
  // The budget auto gives a plan of its tasks.
  const int budget = 24000 / static_cast<int>(start_plan->tasks.size());
  auto b = BalanceStrips(m.graph, po, *start, value, budget);
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_LE(b->evaluations, budget);
  EXPECT_LT(b->value, *start * 0.99);
}

}  // namespace
}  // namespace shoal
