#include "partition/fused_segments.h"

#include <gtest/gtest.h>

#include <set>

#include "models/builder.h"
#include "models/zoo.h"
#include "partition/plan_test_util.h"

namespace shoal {
namespace {

using testing::EqualDevices;
using testing::RunPlanExact;

// A stem, a residual block, and a block that halves the map with a 1x1
// shortcut, then a classifier: ResNet's shapes, small.
Model TwoBlocks(uint64_t seed) {
  GraphBuilder b("two-blocks");
  std::string x = b.Input("x", {1, 3, 20, 12});
  x = b.Relu(b.Conv("stem", x, 4, 3, 1, 1));
  std::string y = b.Relu(b.Conv("a", x, 4, 3, 1, 1));
  y = b.Conv("b", y, 4, 3, 1, 1);
  x = b.Relu(b.Add(y, x));
  y = b.Relu(b.Conv("c", x, 8, 3, 2, 1));
  y = b.Conv("d", y, 8, 3, 1, 1);
  x = b.Relu(b.Add(y, b.Conv("e", x, 8, 1, 2, 0)));
  x = b.Linear("fc", b.Flatten(b.GlobalAvgPool(x)), 5);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, seed);
  return m;
}

std::vector<const Node*> Nodes(const Graph& g, int from, int to) {
  std::vector<const Node*> out;
  for (int i = from; i <= to; ++i) out.push_back(&g.nodes[i]);
  return out;
}

int Index(const Graph& g, const std::string& node) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].name == node) return static_cast<int>(i);
  return -1;
}

// Only one tensor crosses between residual blocks; inside one, the block's
// input (the shortcut) crosses too.
TEST(FusedSegments, CutsFallBetweenBlocks) {
  const Model m = TwoBlocks(1);
  const Graph& g = m.graph;
  EXPECT_EQ(CutTensor(g, -1), g.inputs[0]);
  const int a = Index(g, "a");
  ASSERT_GT(a, 0);
  EXPECT_EQ(CutTensor(g, a - 1), g.nodes[a].inputs[0]);
  EXPECT_EQ(CutTensor(g, a), "");
  const int c = Index(g, "c");
  EXPECT_EQ(CutTensor(g, c - 1), g.nodes[c].inputs[0]);
}

// Two strips of the first block's output (rows 0-9 and 10-19): the sum,
// the second conv and the shortcut need the strip's own rows, the first
// conv one row more towards the other strip (the second conv's halo), the
// block's input two.
TEST(FusedSegments, StripsComputeTheRowsTheirLaterLayersRead) {
  const Model m = TwoBlocks(1);
  const Graph& g = m.graph;
  const int a = Index(g, "a");
  const int c = Index(g, "c");
  const auto nodes = Nodes(g, a, c - 1);
  const std::string out = g.nodes[c - 1].outputs[0];
  auto rows = SegmentRows(g, nodes, out, {{0, 10}, {10, 20}});
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const bool first_conv =
        nodes[i]->name == "a" || (i > 0 && nodes[i - 1]->name == "a");
    const std::vector<Rows> want = first_conv
                                       ? std::vector<Rows>{{0, 11}, {9, 20}}
                                       : std::vector<Rows>{{0, 10}, {10, 20}};
    EXPECT_EQ((*rows)[i], want) << nodes[i]->name;
  }
  auto f = SegmentWorkFactor(g, nodes, *rows);
  ASSERT_TRUE(f.ok());
  EXPECT_GT(*f, 1.0);
  EXPECT_LT(*f, 1.2);
  EXPECT_EQ(DisjointRows({{0, 11}, {9, 20}}),
            (std::vector<Rows>{{0, 11}, {11, 20}}));
  EXPECT_EQ(DisjointRows({{0, 5}, {2, 4}, {3, 9}}),
            (std::vector<Rows>{{0, 5}, {5, 5}, {5, 9}}));
}

// Fused segments are exact on any number of strips, with the fc layer
// whole or split by inputs; one segment through every conv sends nothing
// between devices but the input and the last block's strips.
TEST(FusedSegments, PlansAreExactAndExchangeOnlyAtSegmentInputs) {
  const Model m = TwoBlocks(7);
  for (int n : {2, 3, 4}) {
    for (double factor : {1.05, 10.0}) {
      for (SpatialFc fc : {SpatialFc::kWhole, SpatialFc::kLip}) {
        PlanOptions po;
        po.strategy = "spatial";
        po.devices = EqualDevices(n);
        po.model.spec = m.graph.name;
        po.segment_work_factor = factor;
        po.spatial_fc = fc;
        testing::PlanRunResult r;
        ASSERT_TRUE(RunPlanExact(m, po, &r)) << n << " " << factor;
        bool fused = false;
        for (const auto& d : r.plan.decisions)
          fused |= d.reason.find("fused segment") != std::string::npos;
        EXPECT_TRUE(fused) << n << " " << factor;
        if (factor < 10) continue;
        // Every tensor before the last block's output stays on its device.
        std::set<std::string> inner;
        for (const auto& node : m.graph.nodes) {
          if (node.op == "GlobalAveragePool") break;
          inner.insert(node.outputs[0]);
        }
        inner.erase(m.graph.nodes[Index(m.graph, "fc") - 3].outputs[0]);
        for (const auto& x : r.plan.transfers) {
          if (x.src.task < 0 || x.dst.task < 0) continue;
          if (r.plan.DeviceOf(x.src.task, 0) == r.plan.DeviceOf(x.dst.task, 0))
            continue;
          EXPECT_FALSE(inner.count(x.src.tensor))
              << x.src.tensor << " travels, on " << n << " strips";
        }
      }
    }
  }
}

}  // namespace
}  // namespace shoal
