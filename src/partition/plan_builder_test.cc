// Plan builder requests the strategies do not make on their own but the
// planners may (mixed placements): the plans are still valid and exact.
#include "partition/plan_builder.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph/shape_inference.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "partition/plan_formula.h"
#include "partition/plan_test_util.h"
#include "plan/plan_cost.h"

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

// A conv whose output is reshaped to tokens (vit's patch embedding), then a
// dense layer over the token rows (a MatMul by a weight, imported as Gemm
// with reshapes): the Reshape travelling with the conv's channel split
// reshapes each part to the part's extents, and the rows Gemm is split by
// columns; every strategy is exact or says why it does not apply.
Model PatchesThenTokens() {
  Model m;
  Graph& g = m.graph;
  g.name = "patches";
  EXPECT_TRUE(g.AddInput("x", {1, 3, 8, 8}).ok());
  EXPECT_TRUE(g.AddWeight("cw", {8, 3, 2, 2}).ok());
  EXPECT_TRUE(g.AddWeight("fw", {8, 6}).ok());
  Attrs conv;
  conv.Set("kernel_shape", std::vector<int64_t>{2, 2});
  conv.Set("strides", std::vector<int64_t>{2, 2});
  Attrs to3, rows, back, perm;
  to3.Set("shape", std::vector<int64_t>{1, 8, 16});
  perm.Set("perm", std::vector<int64_t>{0, 2, 1});
  rows.Set("shape", std::vector<int64_t>{16, 8});
  back.Set("shape", std::vector<int64_t>{1, 16, 6});
  EXPECT_TRUE(g.AddNode({"patch", "Conv", {"x", "cw"}, {"p"}, conv}).ok());
  EXPECT_TRUE(g.AddNode({"flat", "Reshape", {"p"}, {"f"}, to3}).ok());
  EXPECT_TRUE(g.AddNode({"tok", "Transpose", {"f"}, {"t"}, perm}).ok());
  EXPECT_TRUE(g.AddNode({"rows", "Reshape", {"t"}, {"r"}, rows}).ok());
  EXPECT_TRUE(g.AddNode({"fc", "Gemm", {"r", "fw"}, {"y"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"unrows", "Reshape", {"y"}, {"z"}, back}).ok());
  g.outputs = {"z"};
  Status s = InferShapes(&g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  m.weights = RandomWeights(g, 9);
  return m;
}

TEST(PlanBuilder, ReshapedConvPartsAndTokenRowsSplit) {
  const Model m = PatchesThenTokens();
  for (const char* strategy : {"lop", "lip"}) {
    PlanOptions po;
    po.strategy = strategy;
    po.devices = testing::EqualDevices(3);
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << strategy << ": " << p.status().message();
    int fc_tasks = 0;
    for (const auto& t : p->tasks)
      for (const auto& n : t.fragment.nodes) fc_tasks += n.name == "fc";
    EXPECT_EQ(fc_tasks, 3) << strategy;
    EXPECT_TRUE(testing::CheckPlanExact(m, std::move(p).value(), nullptr))
        << strategy;
  }
  testing::ExpectEveryStrategyExact(m, {{1, 1}, {1, 2, 1}});
}

// conv -> conv -> relu -> pool -> conv -> relu -> flatten -> fc, each
// layer an input split in the tests below.
Model InputSplitChain() {
  GraphBuilder b("input-split-chain");
  std::string x =
      b.Relu(b.Conv("c1", b.Input("x", {1, 3, 12, 12}), 16, 3, 1, 1));
  x = b.MaxPool(b.Relu(b.Conv("c2", x, 16, 3, 1, 1)), {2, 2}, {2, 2});
  x = b.Flatten(b.Relu(b.Conv("c3", x, 8, 3, 1, 1)));
  x = b.Linear("fc", x, 10);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 13);
  return m;
}

// Bytes each device receives per inference.
std::vector<int64_t> BytesInto(const Plan& p) {
  std::vector<int64_t> in(p.devices.size(), 0);
  for (const auto& l : TrafficPerLink(p)) in[l.to] += l.bytes;
  return in;
}

// Partial sums are reduced among the devices that hold them (a
// reduce-scatter): exact, no device receives them all, and the input
// device's downlink carries a fraction of what it does when every partial
// sum goes to it.
TEST(PlanBuilder, PartialSumsAreReducedAmongTheDevicesThatHoldThem) {
  const Model m = InputSplitChain();
  for (const char* strategy : {"lip", "filter", "fuse"}) {
    PlanOptions po;
    po.strategy = strategy;
    po.devices = testing::EqualDevices(4);
    po.model.spec = m.graph.name;
    testing::PlanRunResult peers, hub;
    ASSERT_TRUE(testing::RunPlanExact(m, po, &peers)) << strategy;
    po.reduce_on_peers = false;
    ASSERT_TRUE(testing::RunPlanExact(m, po, &hub)) << strategy;
    int reducers = 0;
    for (const auto& t : peers.plan.tasks) reducers += t.scheme == "reduce";
    EXPECT_GT(reducers, 0) << strategy;
    for (const auto& t : hub.plan.tasks) EXPECT_NE(t.scheme, "reduce");
    const auto in_peers = BytesInto(peers.plan), in_hub = BytesInto(hub.plan);
    EXPECT_LT(in_peers[0], in_hub[0]) << strategy;
    EXPECT_LT(*std::max_element(in_peers.begin(), in_peers.end()),
              *std::max_element(in_hub.begin(), in_hub.end()))
        << strategy;
    // The formula counts the papers' execution model, summing on the hub.
    EXPECT_FALSE(FormulaCommunication(peers.plan, m.graph).ok());
  }
}

// Beyond kMaxReduceScatterDevices holders, partial sums go to the input
// device: a reduce-scatter's G * (G - 1) messages grow faster than the
// bytes it saves (at a thousand devices its transfers would not fit in
// memory). The plan stays exact and its transfers linear in the devices.
TEST(PlanBuilder, TooManyHoldersSumOnTheInputDevice) {
  constexpr int n = 72;
  static_assert(n > kMaxReduceScatterDevices);
  GraphBuilder b("wide-input-split");
  std::string x = b.Input("x", {1, 4 * n});
  x = b.Linear("fc1", x, 2 * n);
  x = b.Linear("fc2", b.Relu(x), 10);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 5);
  PlanOptions po;
  po.strategy = "lip";
  po.devices = testing::EqualDevices(n);
  po.model.spec = m.graph.name;
  testing::PlanRunResult r;
  ASSERT_TRUE(testing::RunPlanExact(m, po, &r));
  for (const auto& t : r.plan.tasks) EXPECT_NE(t.scheme, "reduce");
  EXPECT_LT(r.plan.transfers.size(), static_cast<size_t>(8 * n));
}

// Two input splits over the same devices: the second reads the slice of
// the first's sums that its own device reduced (through the activation and
// the pool, which run on each slice), so nothing crosses devices in
// between, the input device included.
TEST(PlanBuilder, AnInputSplitReadsTheSlicesReducedOnItsDevices) {
  const Model m = InputSplitChain();
  PlanOptions po;
  po.strategy = "mixed";
  po.devices = testing::EqualDevices(4);
  BuildRequest r = BaseRequest(m.graph, po);
  r.layers["c2"] = LayerChoice{Scheme::kLip, "test", {1, 2, 3}};
  r.layers["c3"] = LayerChoice{Scheme::kLip, "test", {1, 2, 3}};
  auto p = BuildPlan(r);
  ASSERT_TRUE(p.ok()) << p.status().message();
  for (const auto& x : p->transfers) {
    if (x.dst.task < 0 || p->tasks[x.dst.task].layer != "c3") continue;
    EXPECT_EQ(p->DeviceOf(x.src.task, 0), p->DeviceOf(x.dst.task, 0))
        << p->tasks[x.src.task].name << " -> " << p->tasks[x.dst.task].name;
  }
  int c3_tasks = 0;
  for (const auto& t : p->tasks) c3_tasks += t.layer == "c3";
  EXPECT_EQ(c3_tasks, 3);
  EXPECT_TRUE(testing::CheckPlanExact(m, std::move(p).value(), nullptr));
}

}  // namespace
}  // namespace shoal
