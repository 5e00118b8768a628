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

// Two convs on two devices, their concat (on the hub), then a conv: with
// `last`, the concat is the model output instead.
Model TwoBranchesConcat(bool last) {
  GraphBuilder b(last ? "concat-out" : "concat-conv");
  const std::string x = b.Input("x", {1, 3, 8, 8});
  std::string y = b.Concat(
      {b.Relu(b.Conv("a", x, 4, 3, 1, 1)), b.Relu(b.Conv("b", x, 6, 3, 1, 1))},
      1);
  if (!last) y = b.Conv("c", y, 5, 1, 1, 0);
  Model m;
  m.graph = b.Finish({y}).value();
  m.weights = RandomWeights(m.graph, 12);
  return m;
}

// A concat of tensors on several devices is not gathered to run: its
// readers take their regions where the inputs are (the LCP classifier's
// input), and the plan stays exact, the concat being the output too.
TEST(PlanBuilder, AConcatOfTensorsOnSeveralDevicesIsNotGathered) {
  for (bool last : {false, true}) {
    const Model m = TwoBranchesConcat(last);
    PlanOptions po;
    po.strategy = "mixed";
    po.devices = testing::EqualDevices(3);
    BuildRequest r = BaseRequest(m.graph, po);
    for (const auto& n : m.graph.nodes) {
      const bool a = n.name == "a" || (n.op == "Relu" && n.inputs[0] == "a");
      const bool b = n.name == "b" || (n.op == "Relu" && n.inputs[0] == "b");
      r.placement[n.name] = {a ? 1 : b ? 2 : 0};
    }
    auto p = BuildPlan(r);
    ASSERT_TRUE(p.ok()) << p.status().message();
    for (const auto& t : p->tasks) {
      for (const auto& n : t.fragment.nodes) {
        EXPECT_NE(n.op, "Concat") << t.name;
      }
    }
    // Each branch's output goes once, straight to its reader.
    int from_branches = 0;
    for (const auto& x : p->transfers) {
      if (x.src.task >= 0 && p->tasks[x.src.task].devices[0] != 0) {
        from_branches++;
        EXPECT_TRUE(x.dst.task == kModelOutput ||
                    p->tasks[x.dst.task].devices[0] == 0);
      }
    }
    EXPECT_EQ(from_branches, 2);
    EXPECT_TRUE(testing::CheckPlanExact(m, std::move(p).value(), nullptr))
        << (last ? "concat as the output" : "concat then conv");
  }
}

}  // namespace
}  // namespace shoal
