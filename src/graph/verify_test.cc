// The verifier: one valid graph, then one corruption per check it makes.
#include "graph/verify.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"

namespace shoal {
namespace {

Node MakeNode(const std::string& name, const std::string& op,
              std::vector<std::string> inputs, std::vector<std::string> outputs,
              Attrs attrs = {}) {
  Node n;
  n.name = name;
  n.op = op;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  n.attrs = std::move(attrs);
  return n;
}

// x -> conv (3x3, pad 1) -> relu -> y, shaped.
Graph ValidGraph() {
  Graph g;
  g.name = "small";
  EXPECT_TRUE(g.AddInput("x", {1, 3, 8, 8}).ok());
  EXPECT_TRUE(g.AddWeight("w", {4, 3, 3, 3}).ok());
  EXPECT_TRUE(g.AddWeight("b", {4}).ok());
  Attrs pads;
  pads.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_TRUE(
      g.AddNode(MakeNode("conv", "Conv", {"x", "w", "b"}, {"c"}, pads)).ok());
  EXPECT_TRUE(g.AddNode(MakeNode("relu", "Relu", {"c"}, {"y"})).ok());
  g.outputs = {"y"};
  Status s = InferShapes(&g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

bool Mentions(const Status& s, const std::string& text) {
  return s.message().find(text) != std::string::npos;
}

TEST(VerifyTest, AcceptsValidGraph) {
  Graph g = ValidGraph();
  Status s = VerifyGraph(g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.FindTensor("y")->shape, (Shape{1, 4, 8, 8}));
}

TEST(VerifyTest, DuplicateNodeName) {
  Graph g = ValidGraph();
  g.nodes[1].name = "conv";
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'conv'")) << s.message();
  EXPECT_TRUE(Mentions(s, "twice")) << s.message();
}

TEST(VerifyTest, EmptyNodeName) {
  Graph g = ValidGraph();
  g.nodes[1].name = "";
  EXPECT_EQ(VerifyGraph(g).code(), Code::kInvalidArgument);
}

TEST(VerifyTest, TensorDefinedTwice) {
  // AddNode refuses this, so corrupt the node list directly, as a buggy
  // transform could.
  Graph g = ValidGraph();
  g.nodes.push_back(MakeNode("relu2", "Relu", {"c"}, {"y"}));
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'y'")) << s.message();
  EXPECT_TRUE(Mentions(s, "defined twice")) << s.message();
}

TEST(VerifyTest, NodeOverwritingGraphInput) {
  Graph g = ValidGraph();
  g.nodes.push_back(MakeNode("clobber", "Relu", {"y"}, {"x"}));
  Status s = VerifyGraph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Mentions(s, "'x'")) << s.message();
}

TEST(VerifyTest, WrongStoredShape) {
  Graph g = ValidGraph();
  g.FindTensor("c")->shape = {1, 4, 6, 6};  // as if pads were ignored
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'c'")) << s.message();
  EXPECT_TRUE(Mentions(s, "'conv'")) << s.message();
  EXPECT_TRUE(Mentions(s, "1x4x8x8")) << s.message();
}

TEST(VerifyTest, StaleShapesAfterAnEdit) {
  // Changing an attribute without re-running inference is caught.
  Graph g = ValidGraph();
  g.nodes[0].attrs.Set("strides", std::vector<int64_t>{2, 2});
  Status s = VerifyGraph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Mentions(s, "'conv'")) << s.message();
  // Inference repairs it.
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_TRUE(VerifyGraph(g).ok());
}

TEST(VerifyTest, UnshapedTensor) {
  Graph g = ValidGraph();
  g.FindTensor("y")->shaped = false;
  EXPECT_FALSE(VerifyGraph(g).ok());
}

TEST(VerifyTest, UnknownOpIsUnsupported) {
  Graph g = ValidGraph();
  g.nodes[1].op = "Swish";
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_TRUE(Mentions(s, "Swish")) << s.message();
  EXPECT_TRUE(Mentions(s, "'relu'")) << s.message();
}

TEST(VerifyTest, UnknownAttributeIsUnsupported) {
  Graph g = ValidGraph();
  g.nodes[0].attrs.Set("padding_mode", std::string("reflect"));
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kUnsupported);
  EXPECT_TRUE(Mentions(s, "'padding_mode'")) << s.message();
  EXPECT_TRUE(Mentions(s, "'conv'")) << s.message();
}

TEST(VerifyTest, MissingGraphOutput) {
  Graph g = ValidGraph();
  g.outputs.push_back("logits");
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'logits'")) << s.message();

  Graph none = ValidGraph();
  none.outputs.clear();
  EXPECT_EQ(VerifyGraph(none).code(), Code::kInvalidArgument);
}

TEST(VerifyTest, GraphOutputMayBeAnInput) {
  // A pass-through output is computed (it is given).
  Graph g = ValidGraph();
  g.outputs.push_back("x");
  EXPECT_TRUE(VerifyGraph(g).ok());
}

TEST(VerifyTest, NodesOutOfOrder) {
  Graph g = ValidGraph();
  std::swap(g.nodes[0], g.nodes[1]);
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'relu'")) << s.message();
  EXPECT_TRUE(Mentions(s, "'c'")) << s.message();
}

TEST(VerifyTest, ReadOfUndefinedTensor) {
  Graph g = ValidGraph();
  g.nodes[1].inputs = {"nowhere"};
  Status s = VerifyGraph(g);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(Mentions(s, "'nowhere'")) << s.message();
}

TEST(VerifyTest, GraphInputMustBeAnActivation) {
  Graph g = ValidGraph();
  g.inputs.push_back("w");
  EXPECT_FALSE(VerifyGraph(g).ok());
  Graph h = ValidGraph();
  h.inputs.push_back("missing");
  EXPECT_FALSE(VerifyGraph(h).ok());
}

TEST(VerifyTest, ShapeErrorsOfOpsPropagate) {
  Graph g = ValidGraph();
  g.FindTensor("w")->shape = {4, 2, 3, 3};  // channels no longer match
  Status s = VerifyGraph(g);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_TRUE(Mentions(s, "'conv'")) << s.message();
}

}  // namespace
}  // namespace shoal
