// An fc layer split by its inputs on the 2-D tiles where they lie
// (plan_builder_boxes.cc): exact, and nothing regroups the tiles first.
#include <gtest/gtest.h>

#include "models/builder.h"
#include "models/zoo.h"
#include "partition/plan_test_util.h"
#include "plan/task_weights.h"

namespace shoal {
namespace {

// conv -> pool (a 6x6 map) -> flatten -> dropout -> fc -> relu -> fc. With
// `transposed`, the first fc's weight is [features, out] (Gemm transB 0).
Model TilesThenFc(bool transposed) {
  GraphBuilder b(transposed ? "tiles-fc-t" : "tiles-fc");
  std::string x =
      b.Relu(b.Conv("c1", b.Input("x", {1, 3, 12, 12}), 8, 3, 1, 1));
  x = b.MaxPool(x, {2, 2}, {2, 2});
  x = b.Dropout(b.Flatten(x));
  if (transposed) {
    Attrs a;
    a.Set("transB", int64_t{0});
    x = b.Op("Gemm",
             {x, b.Weight("fc1.w", {8 * 6 * 6, 10}), b.Weight("fc1.b", {10})},
             a, "fc1");
  } else {
    x = b.Linear("fc1", x, 10);
  }
  x = b.Linear("fc2", b.Relu(x), 5);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 5);
  return m;
}

PlanOptions TilesOptions(int devices) {
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = testing::EqualDevices(devices);
  po.tiles = TileShape::k2D;
  po.spatial_fc = SpatialFc::kLip;
  po.max_read_factor = 6;
  return po;
}

TEST(PlanBuilderBoxes, FcMultipliesEachTileWhereItLies) {
  for (bool transposed : {false, true}) {
    const Model m = TilesThenFc(transposed);
    auto p = MakePlan(m.graph, TilesOptions(4));
    ASSERT_TRUE(p.ok()) << p.status().message();
    const std::string fc1_weight = m.graph.FindNode("fc1")->inputs[1];
    // Each device's part of fc1 reads its tile through a view of the
    // weight, and no task of fc1 receives the pooled map from elsewhere.
    int viewed = 0;
    for (const Task& t : p->tasks) {
      for (const WeightSlice& w : t.weights) {
        if (w.source != fc1_weight) continue;
        ASSERT_FALSE(w.view.empty()) << t.name;
        EXPECT_EQ(w.view,
                  transposed ? Shape({8, 6, 6, 10}) : Shape({10, 8, 6, 6}));
        ++viewed;
      }
    }
    EXPECT_EQ(viewed, 4);
    bool decided = false;
    for (const LayerDecision& d : p->decisions) {
      if (d.layer == "fc1") {
        decided = true;
        EXPECT_NE(d.reason.find("where the inputs lie"), std::string::npos)
            << d.reason;
      }
    }
    EXPECT_TRUE(decided);
    // The plan's slices, cut from the model's weights, hold every weight
    // of fc1 once.
    int64_t fc1 = 0;
    for (const Task& t : p->tasks) {
      auto w = SliceTaskWeights(t, m.weights);
      ASSERT_TRUE(w.ok()) << w.status().message();
      for (const WeightSlice& s : t.weights) {
        if (s.source == fc1_weight) fc1 += NumElements(w->at(s.name).shape);
      }
    }
    EXPECT_EQ(fc1, 8 * 6 * 6 * 10);
    EXPECT_TRUE(testing::CheckPlanExact(m, std::move(p).value(), nullptr))
        << (transposed ? "transB 0" : "transB 1");
  }
}

// Unequal devices cut unequal tiles; each still multiplies its own.
TEST(PlanBuilderBoxes, UnequalTilesAreExact) {
  const Model m = TilesThenFc(false);
  PlanOptions po = TilesOptions(3);
  po.devices = testing::Devices({1.0, 2.5, 1.5});
  EXPECT_TRUE(testing::RunPlanExact(m, po));
}

// A view that does not hold the source's elements, or a box that does not
// fill the fragment's weight, is refused by name.
TEST(PlanBuilderBoxes, BrokenViewsAreRefused) {
  const Model m = TilesThenFc(false);
  auto made = MakePlan(m.graph, TilesOptions(4));
  ASSERT_TRUE(made.ok()) << made.status().message();
  auto find = [](Plan& p) -> WeightSlice* {
    for (Task& t : p.tasks) {
      for (WeightSlice& w : t.weights) {
        if (!w.view.empty()) return &w;
      }
    }
    return nullptr;
  };
  {
    Plan p = *made;
    WeightSlice* w = find(p);
    ASSERT_NE(w, nullptr);
    w->view = {10, 8, 6, 7};  // the box stays inside it
    Status s = VerifyPlanAgainstModel(p, m.graph);
    EXPECT_NE(s.message().find("does not hold the same elements"),
              std::string::npos)
        << s.message();
  }
  {
    Plan p = *made;
    WeightSlice* w = find(p);
    ASSERT_NE(w, nullptr);
    ASSERT_GT(w->region.end[2] - w->region.begin[2], 1);
    w->region.end[2] = w->region.begin[2] + 1;  // fewer elements
    Status s = VerifyPlan(p);
    EXPECT_NE(s.message().find("does not hold as many elements"),
              std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace shoal
