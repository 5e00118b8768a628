// Plan builder requests the strategies do not make on their own but the
// planners may (mixed placements): the plans are still valid and exact.
#include "partition/plan_builder.h"

#include <gtest/gtest.h>

#include "models/builder.h"
#include "models/zoo.h"
#include "partition/plan_test_util.h"

namespace shoal {
namespace {

// conv -> conv (input split: partial sums) -> relu -> conv.
Model PartialsThenRelu() {
  GraphBuilder b("partials-then-relu");
  std::string x = b.Conv("c1", b.Input("x", {1, 3, 8, 8}), 8, 3, 1, 1);
  x = b.Relu(b.Conv("c2", x, 8, 3, 1, 1));
  x = b.Conv("c3", x, 4, 1, 1, 0);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 11);
  return m;
}

// A whole node off the input device that reads partial sums: the sums are
// merged in a task before the reader's, since a task receives only from
// earlier tasks (this made an invalid plan: the merge came after).
TEST(PlanBuilder, PartialSumsReadOffTheInputDeviceAreMergedFirst) {
  const Model m = PartialsThenRelu();
  for (int reader : {0, 1, 2}) {
    PlanOptions po;
    po.strategy = "mixed";
    po.devices = testing::EqualDevices(3);
    BuildRequest r = BaseRequest(m.graph, po);
    r.layers["c2"] = LayerChoice{Scheme::kLip, "test", {1, 2}};
    const Node* relu = m.graph.FindNode(m.graph.nodes[2].name);
    ASSERT_EQ(relu->op, "Relu");
    r.placement[relu->name] = {reader};
    r.placement["c3"] = {reader};
    auto p = BuildPlan(r);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(testing::CheckPlanExact(m, std::move(p).value(), nullptr))
        << "reader on device " << reader;
  }
}

}  // namespace
}  // namespace shoal
