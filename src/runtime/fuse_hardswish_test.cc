// x * HardSigmoid(x) with HardSwish's constants becomes one HardSwish node
// and computes the same; other gates (an SE block's, other constants, a
// gate read twice) stay.
#include "graph/fuse_hardswish.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

// conv -> HardSigmoid(alpha) -> Mul with the conv output (or, with `other`,
// with a second conv's output: a gate, not HardSwish).
Graph Gated(float alpha, bool gate_first, bool other, bool tap_gate) {
  Graph g;
  g.name = "gated";
  EXPECT_TRUE(g.AddInput("x", {1, 3, 8, 8}).ok());
  EXPECT_TRUE(g.AddWeight("c.w", {4, 3, 3, 3}).ok());
  EXPECT_TRUE(g.AddWeight("d.w", {4, 3, 3, 3}).ok());
  EXPECT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"y"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"d", "Conv", {"x", "d.w"}, {"u"}, {}}).ok());
  Attrs a;
  a.Set("alpha", alpha);
  a.Set("beta", 0.5f);
  EXPECT_TRUE(g.AddNode({"hs", "HardSigmoid", {"y"}, {"h"}, a}).ok());
  std::vector<std::string> in = {other ? "u" : "y", "h"};
  if (gate_first) std::swap(in[0], in[1]);
  EXPECT_TRUE(g.AddNode({"mul", "Mul", in, {"z"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"sum", "Add", {"z", "u"}, {"s"}, {}}).ok());
  g.outputs = {"s"};
  if (tap_gate) g.outputs.push_back("h");
  Status s = InferShapes(&g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

void ExpectSameResult(const Graph& before, const Graph& after) {
  const WeightStore w = RandomWeights(before, 3);
  const std::vector<Tensor> in = {RandomInput({1, 3, 8, 8}, 3)};
  for (Backend be : {Backend::kReference, Backend::kOneDnn}) {
    auto a = RunWith(before, w, Backend::kReference, in);
    auto b = RunWith(after, w, be, in);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i)
      EXPECT_LE(MaxRelDiff(a[i], b[i]), 1e-5);
  }
}

TEST(FuseHardSwish, XTimesItsHardSigmoidIsHardSwish) {
  for (bool gate_first : {false, true}) {
    const Graph before = Gated(1.f / 6, gate_first, false, false);
    Graph g = before;
    EXPECT_EQ(FuseHardSwish(&g), 1);
    ASSERT_TRUE(VerifyGraph(g).ok());
    const Node* n = g.FindNode("mul");
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(n->op, "HardSwish");
    EXPECT_EQ(n->inputs, std::vector<std::string>{"y"});
    EXPECT_EQ(g.FindNode("hs"), nullptr);
    EXPECT_EQ(g.FindTensor("h"), nullptr);
    ExpectSameResult(before, g);
  }
}

TEST(FuseHardSwish, OtherGatesStay) {
  for (const Graph& before : {Gated(0.2f, false, false, false),    // constants
                              Gated(1.f / 6, false, true, false),  // SE gate
                              Gated(1.f / 6, false, false, true)}) {  // tapped
    Graph g = before;
    EXPECT_EQ(FuseHardSwish(&g), 0);
    EXPECT_EQ(g.nodes.size(), before.nodes.size());
  }
}

}  // namespace
}  // namespace shoal
