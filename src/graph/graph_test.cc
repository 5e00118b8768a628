// Graph IR: tensor bookkeeping, producer/consumer queries, stable TopoSort,
// cycle and undefined-tensor detection.
#include "graph/graph.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"

namespace shoal {
namespace {

Node MakeNode(const std::string& name, const std::string& op,
              std::vector<std::string> inputs,
              std::vector<std::string> outputs) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

std::vector<std::string> NodeNames(const Graph& g) {
  std::vector<std::string> out;
  for (const auto& n : g.nodes) out.push_back(n.name);
  return out;
}

TEST(GraphTest, AddTensorsAndRejectRedefinition) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 3}).ok());
  ASSERT_TRUE(g.AddWeight("w", {3, 3}).ok());
  EXPECT_FALSE(g.AddInput("x", {1, 3}).ok());
  EXPECT_FALSE(g.AddWeight("x", {1}).ok());
  EXPECT_FALSE(g.AddInput("w", {1}).ok());
  EXPECT_EQ(g.inputs, std::vector<std::string>{"x"});

  const TensorInfo* x = g.FindTensor("x");
  ASSERT_NE(x, nullptr);
  EXPECT_FALSE(x->is_weight());
  EXPECT_TRUE(x->shaped);
  EXPECT_TRUE(g.FindTensor("w")->is_weight());
  EXPECT_EQ(g.FindTensor("nope"), nullptr);

  ASSERT_TRUE(g.AddNode(MakeNode("r", "Relu", {"x"}, {"y"})).ok());
  const TensorInfo* y = g.FindTensor("y");
  ASSERT_NE(y, nullptr);
  EXPECT_FALSE(y->shaped);
  EXPECT_FALSE(y->is_weight());

  Status s = g.AddNode(MakeNode("r2", "Relu", {"x"}, {"y"}));
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'r2'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'y'"), std::string::npos) << s.message();
  EXPECT_EQ(g.nodes.size(), 1u);
  // Outputs may not shadow inputs or weights either.
  EXPECT_FALSE(g.AddNode(MakeNode("r3", "Relu", {"x"}, {"w"})).ok());
}

TEST(GraphTest, ProducersConsumersAndWeights) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(g.AddWeight("w", {4, 4}).ok());
  ASSERT_TRUE(g.AddWeight("unused", {2}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("mm", "MatMul", {"x", "w"}, {"a"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("sq", "Mul", {"a", "a"}, {"b"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("add", "Add", {"a", "b"}, {"c"})).ok());

  EXPECT_EQ(g.ProducerIndex("a"), 0);
  EXPECT_EQ(g.ProducerIndex("c"), 2);
  EXPECT_EQ(g.ProducerIndex("x"), -1);
  EXPECT_EQ(g.ProducerIndex("w"), -1);
  EXPECT_EQ(g.ProducerIndex("nope"), -1);
  // A node reading a tensor twice is listed once.
  EXPECT_EQ(g.ConsumerIndices("a"), (std::vector<int>{1, 2}));
  EXPECT_EQ(g.ConsumerIndices("c"), std::vector<int>{});
  EXPECT_EQ(g.WeightInputs(g.nodes[0]), std::vector<std::string>{"w"});
  EXPECT_TRUE(g.WeightInputs(g.nodes[1]).empty());
  ASSERT_NE(g.FindNode("sq"), nullptr);
  EXPECT_EQ(g.FindNode("sq")->op, "Mul");
  EXPECT_EQ(g.FindNode("nope"), nullptr);

  g.DropUnusedWeights();
  EXPECT_EQ(g.FindTensor("unused"), nullptr);
  EXPECT_NE(g.FindTensor("w"), nullptr);
  EXPECT_NE(g.FindTensor("x"), nullptr);  // activations are kept
}

TEST(GraphTest, TopoSortIsStable) {
  // Added out of order: c reads b's output, b reads a's. d is independent.
  Graph g;
  g.name = "g";
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("c", "Relu", {"b_out"}, {"c_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("a", "Relu", {"x"}, {"a_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("b", "Relu", {"a_out"}, {"b_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("d", "Relu", {"x"}, {"d_out"})).ok());
  ASSERT_TRUE(g.TopoSort().ok());
  // Lowest ready index first: a (1) and d (3) start ready; a frees b (2),
  // which goes before d; b frees c (0), which goes before d too.
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(GraphTest, TopoSortKeepsAValidOrderUnchanged) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  // Two branches interleaved on purpose; already topological.
  ASSERT_TRUE(g.AddNode(MakeNode("p2", "Relu", {"x"}, {"q1"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("p1", "Relu", {"x"}, {"r1"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("q2", "Relu", {"r1"}, {"r2"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("z", "Add", {"q1", "r2"}, {"y"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("lone", "Relu", {"x"}, {"l"})).ok());
  const std::vector<std::string> before = NodeNames(g);
  ASSERT_TRUE(g.TopoSort().ok());
  EXPECT_EQ(NodeNames(g), before);
  ASSERT_TRUE(g.TopoSort().ok());  // idempotent
  EXPECT_EQ(NodeNames(g), before);
}

TEST(GraphTest, TopoSortMovesOnlyWhatMustMove) {
  // z (index 0) needs the last node; everything else keeps its place.
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("z", "Relu", {"e"}, {"z_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("m1", "Relu", {"x"}, {"m1_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("m2", "Relu", {"x"}, {"m2_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("last", "Relu", {"x"}, {"e"})).ok());
  ASSERT_TRUE(g.TopoSort().ok());
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"m1", "m2", "last", "z"}));
}

TEST(GraphTest, TopoSortDetectsCycles) {
  Graph g;
  g.name = "loopy";
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("a", "Add", {"x", "b_out"}, {"a_out"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("b", "Relu", {"a_out"}, {"b_out"})).ok());
  const std::vector<std::string> before = NodeNames(g);
  Status s = g.TopoSort();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'loopy'"), std::string::npos) << s.message();
  // A failed sort leaves the graph as it was.
  EXPECT_EQ(NodeNames(g), before);

  Graph self;
  ASSERT_TRUE(self.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(
      self.AddNode(MakeNode("s", "Add", {"x", "s_out"}, {"s_out"})).ok());
  EXPECT_FALSE(self.TopoSort().ok());
}

TEST(GraphTest, TopoSortRejectsUndefinedTensor) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("reader", "Add", {"x", "ghost"}, {"y"})).ok());
  Status s = g.TopoSort();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'reader'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'ghost'"), std::string::npos) << s.message();
}

TEST(GraphTest, TopoSortRejectsActivationThatIsNeitherInputNorProduced) {
  // In the tensor table but produced by no node and not a graph input (e.g.
  // its producer was deleted by a transform).
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  g.tensors["orphan"] =
      TensorInfo{"orphan", {1, 4}, TensorKind::kActivation, true};
  ASSERT_TRUE(g.AddNode(MakeNode("n", "Add", {"x", "orphan"}, {"y"})).ok());
  Status s = g.TopoSort();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("'orphan'"), std::string::npos) << s.message();
}

TEST(GraphTest, TopoSortIgnoresAbsentOptionalInputs) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 3, 4, 4}).ok());
  ASSERT_TRUE(g.AddWeight("w", {2, 3, 1, 1}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("conv", "Conv", {"x", "w", ""}, {"y"})).ok());
  ASSERT_TRUE(g.TopoSort().ok());
}

TEST(GraphTest, InferShapesSortsFirstAndRejectsUnknownOp) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4}).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("second", "Relu", {"a"}, {"b"})).ok());
  ASSERT_TRUE(g.AddNode(MakeNode("first", "Relu", {"x"}, {"a"})).ok());
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(NodeNames(g), (std::vector<std::string>{"first", "second"}));
  EXPECT_TRUE(g.FindTensor("b")->shaped);
  EXPECT_EQ(g.FindTensor("b")->shape, (Shape{1, 4}));

  ASSERT_TRUE(g.AddNode(MakeNode("odd", "NoSuchOp", {"b"}, {"c"})).ok());
  Status s = InferShapes(&g);
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_NE(s.message().find("'odd'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("NoSuchOp"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace shoal
