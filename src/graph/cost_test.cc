// Cost accounting on hand-built graphs. Peak activation figures are worked
// out by hand in the comments, in elements (x4 for bytes): at each node its
// outputs are added to the live set, the peak is taken, then inputs read for
// the last time are freed and outputs nobody reads die.
#include "graph/cost.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"

namespace shoal {
namespace {

using Ints = std::vector<int64_t>;

class GraphMaker {
 public:
  GraphMaker() { g_.name = "test"; }
  GraphMaker& Input(const std::string& n, const Shape& s) {
    EXPECT_TRUE(g_.AddInput(n, s).ok());
    return *this;
  }
  GraphMaker& Weight(const std::string& n, const Shape& s) {
    EXPECT_TRUE(g_.AddWeight(n, s).ok());
    return *this;
  }
  GraphMaker& Node(const std::string& name, const std::string& op,
                   std::vector<std::string> in, std::vector<std::string> out,
                   Attrs attrs = {}) {
    shoal::Node n;
    n.name = name;
    n.op = op;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    n.attrs = std::move(attrs);
    EXPECT_TRUE(g_.AddNode(std::move(n)).ok());
    return *this;
  }
  Graph Finish(std::vector<std::string> outputs) {
    g_.outputs = std::move(outputs);
    Status s = InferShapes(&g_);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return g_;
  }

 private:
  Graph g_;
};

Attrs A(std::initializer_list<std::pair<const char*, AttrValue>> kv) {
  Attrs a;
  for (const auto& [k, v] : kv) a.Set(k, v);
  return a;
}

TEST(PeakActivationTest, Chain) {
  // x 16 -> conv c 128 -> relu r 128 -> pool p 32.
  //   start        live 16
  //   conv   +128 = 144, free x  -> 128
  //   relu   +128 = 256, free c  -> 128   <- peak: input and output coexist
  //   pool   +32  = 160, free r  -> 32
  Graph g =
      GraphMaker()
          .Input("x", {1, 1, 4, 4})
          .Weight("w", {8, 1, 3, 3})
          .Node("conv", "Conv", {"x", "w"}, {"c"},
                A({{"pads", Ints{1, 1, 1, 1}}}))
          .Node("relu", "Relu", {"c"}, {"r"})
          .Node("pool", "MaxPool", {"r"}, {"p"},
                A({{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}))
          .Finish({"p"});
  ASSERT_EQ(g.FindTensor("p")->shape, (Shape{1, 8, 2, 2}));
  // The 72 weight elements are not activations.
  EXPECT_EQ(PeakActivationBytes(g), 256 * kBytesPerElement);
}

TEST(PeakActivationTest, InputOnlyGraph) {
  Graph g = GraphMaker().Input("x", {1, 4}).Finish({"x"});
  EXPECT_EQ(PeakActivationBytes(g), 16);
}

TEST(PeakActivationTest, ResidualKeepsSkipTensorLive) {
  // x 64 -> a = relu(x) 64 -> b = conv1(a) 128 -> c = conv2(b) 64
  //      -> y = a + c 64.
  //   start          live 64
  //   relu   +64  = 128, free x      -> 64  (a)
  //   conv1  +128 = 192              -> 192 (a, b): a waits for the add
  //   conv2  +64  = 256, free b      -> 128 <- peak a + b + c
  //   add    +64  = 192, free a, c   -> 64
  // Freeing a after its first reader would give 192 instead.
  Graph g = GraphMaker()
                .Input("x", {1, 4, 4, 4})
                .Weight("w1", {8, 4, 1, 1})
                .Weight("w2", {4, 8, 1, 1})
                .Node("relu", "Relu", {"x"}, {"a"})
                .Node("conv1", "Conv", {"a", "w1"}, {"b"})
                .Node("conv2", "Conv", {"b", "w2"}, {"c"})
                .Node("add", "Add", {"a", "c"}, {"y"})
                .Finish({"y"});
  EXPECT_EQ(PeakActivationBytes(g), 256 * kBytesPerElement);
}

TEST(PeakActivationTest, GraphOutputStaysLiveToTheEnd) {
  // x 8 -> r1 = relu(x) 8 (a graph output) -> g = fc(r1) 32 -> r2 32.
  //   start          live 8
  //   relu   +8  = 16, free x  -> 8
  //   fc     +32 = 40          -> 40  r1 is an output: never freed
  //   relu2  +32 = 72, free g  -> 40  <- peak r1 + g + r2
  Graph g = GraphMaker()
                .Input("x", {1, 8})
                .Weight("w", {8, 32})
                .Node("relu", "Relu", {"x"}, {"r1"})
                .Node("fc", "Gemm", {"r1", "w"}, {"g"})
                .Node("relu2", "Relu", {"g"}, {"r2"})
                .Finish({"r1", "r2"});
  EXPECT_EQ(PeakActivationBytes(g), 72 * kBytesPerElement);
}

TEST(PeakActivationTest, UnusedOutputDiesAtOnce) {
  // x 32 -> split s0 16, s1 16 (s1 unread) -> conv c = conv(s0) 64.
  //   start          live 32
  //   split  +32 = 64, free x, s1 dies  -> 16
  //   conv   +64 = 80, free s0          -> 64  <- peak s0 + c
  // Keeping s1 alive would give 96.
  Graph g = GraphMaker()
                .Input("x", {1, 8, 2, 2})
                .Weight("w", {16, 4, 1, 1})
                .Node("split", "Split", {"x"}, {"s0", "s1"}, A({{"axis", 1}}))
                .Node("conv", "Conv", {"s0", "w"}, {"c"})
                .Finish({"c"});
  EXPECT_EQ(PeakActivationBytes(g), 80 * kBytesPerElement);
}

TEST(PeakActivationTest, TensorReadTwiceByOneNodeIsFreedOnce) {
  // x 4 -> s = x + x 4 -> cat = concat(s, s, s) 12.
  //   start        live 4
  //   add  +4  = 8, free x once  -> 4
  //   cat  +12 = 16, free s      -> 12  <- peak
  // Freeing x twice would leave 0 live after the add and a peak of 12.
  Graph g =
      GraphMaker()
          .Input("x", {1, 4})
          .Node("add", "Add", {"x", "x"}, {"s"})
          .Node("cat", "Concat", {"s", "s", "s"}, {"cat"}, A({{"axis", 1}}))
          .Finish({"cat"});
  EXPECT_EQ(g.FindTensor("cat")->shape, (Shape{1, 12}));
  EXPECT_EQ(PeakActivationBytes(g), 16 * kBytesPerElement);
}

TEST(GraphCostTest, SharedWeightCountedOnce) {
  // Two 3x3 convs, pad 1, share W [3, 3, 3, 3] and B [3]: 84 stored
  // elements, though each node reports them.
  Graph g = GraphMaker()
                .Input("x", {1, 3, 8, 8})
                .Weight("W", {3, 3, 3, 3})
                .Weight("B", {3})
                .Node("conv1", "Conv", {"x", "W", "B"}, {"c1"},
                      A({{"pads", Ints{1, 1, 1, 1}}}))
                .Node("conv2", "Conv", {"c1", "W", "B"}, {"c2"},
                      A({{"pads", Ints{1, 1, 1, 1}}}))
                .Finish({"c2"});
  auto cost = ComputeGraphCost(g);
  ASSERT_TRUE(cost.ok()) << cost.status().ToString();
  EXPECT_EQ(cost->params, 84);
  EXPECT_EQ(cost->weight_elements, 84);
  EXPECT_EQ(cost->weight_bytes(), 84 * 4);
  // MACs are per use: each conv does 3 * 8 * 8 outputs x 27.
  EXPECT_EQ(cost->macs, 2 * 3 * 64 * 27);
  ASSERT_EQ(cost->nodes.size(), 2u);
  EXPECT_EQ(cost->nodes[0].name, "conv1");
  EXPECT_EQ(cost->nodes[1].name, "conv2");
  EXPECT_EQ(cost->nodes[0].params, 84);
  EXPECT_EQ(cost->nodes[1].params, 84);
  EXPECT_EQ(cost->nodes[1].macs, 3 * 64 * 27);
  EXPECT_EQ(cost->peak_activation_bytes, PeakActivationBytes(g));
  EXPECT_EQ(cost->peak_activation_bytes, 2 * 192 * kBytesPerElement);
}

TEST(GraphCostTest, WeightReadTwiceByOneNodeCountedOnce) {
  Graph g = GraphMaker()
                .Input("x", {1, 4})
                .Weight("s", {1, 4})
                .Node("m", "Mul", {"s", "s"}, {"ss"})
                .Node("a", "Add", {"x", "ss"}, {"y"})
                .Finish({"y"});
  auto cost = ComputeGraphCost(g);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->params, 4);
  EXPECT_EQ(cost->weight_elements, 4);
}

TEST(GraphCostTest, BatchNormStatisticsAreWeightsNotParams) {
  Graph g = GraphMaker()
                .Input("x", {1, 3, 4, 4})
                .Weight("w", {6, 3, 1, 1})
                .Weight("bn.scale", {6})
                .Weight("bn.bias", {6})
                .Weight("bn.mean", {6})
                .Weight("bn.var", {6})
                .Node("conv", "Conv", {"x", "w"}, {"c"})
                .Node("bn", "BatchNormalization",
                      {"c", "bn.scale", "bn.bias", "bn.mean", "bn.var"}, {"y"})
                .Finish({"y"});
  auto cost = ComputeGraphCost(g);
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->params, 18 + 12);
  EXPECT_EQ(cost->weight_elements, 18 + 24);
  EXPECT_EQ(cost->macs, 6 * 16 * 3);
}

TEST(NodeCostTest, AbsentOptionalInputCostsNothing) {
  Graph g = GraphMaker()
                .Input("x", {1, 3, 4, 4})
                .Weight("w", {6, 3, 1, 1})
                .Node("conv", "Conv", {"x", "w", ""}, {"c"})
                .Finish({"c"});
  auto c = ComputeNodeCost(g, g.nodes[0]);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->params, 18);
  EXPECT_EQ(c->input_elements, 48);
  EXPECT_EQ(c->output_elements, 96);
  EXPECT_EQ(c->op, "Conv");
}

TEST(NodeCostTest, Errors) {
  Graph g = GraphMaker().Input("x", {1, 4}).Finish({"x"});
  Node odd;
  odd.name = "odd";
  odd.op = "NoSuchOp";
  odd.inputs = {"x"};
  EXPECT_EQ(ComputeNodeCost(g, odd).status().code(), Code::kUnsupported);
  Node ghost;
  ghost.name = "ghost";
  ghost.op = "Relu";
  ghost.inputs = {"nowhere"};
  auto s = ComputeNodeCost(g, ghost);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'ghost'"), std::string::npos);
  g.nodes.push_back(odd);
  EXPECT_FALSE(ComputeGraphCost(g).ok());
}

}  // namespace
}  // namespace shoal
