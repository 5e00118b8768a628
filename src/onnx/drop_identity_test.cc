#include "onnx/drop_identity.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"
#include "graph/verify.h"

namespace shoal {
namespace {

Graph Chain(const std::string& last_op) {
  Graph g;
  g.name = "chain";
  EXPECT_TRUE(g.AddInput("x", {1, 4}).ok());
  EXPECT_TRUE(g.AddNode({"relu", "Relu", {"x"}, {"a"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"id", "Identity", {"a"}, {"b"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"sig", "Sigmoid", {"b"}, {"c"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"drop", "Dropout", {"c"}, {"d"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"last", last_op, {"d"}, {"y"}, {}}).ok());
  g.outputs = {"y"};
  EXPECT_TRUE(InferShapes(&g).ok());
  return g;
}

TEST(OnnxDropIdentity, ReadersReadTheInput) {
  Graph g = Chain("Relu");
  EXPECT_EQ(DropIdentityOps(&g), 2);
  ASSERT_TRUE(VerifyGraph(g).ok());
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[1].inputs, std::vector<std::string>{"a"});
  EXPECT_EQ(g.nodes[2].inputs, std::vector<std::string>{"c"});
  EXPECT_FALSE(g.FindTensor("b"));
  EXPECT_FALSE(g.FindTensor("d"));
}

// A graph output made by an Identity keeps its name: the producer of the
// Identity's input writes it.
TEST(OnnxDropIdentity, GraphOutputKeepsItsName) {
  Graph g = Chain("Identity");
  EXPECT_EQ(DropIdentityOps(&g), 3);
  ASSERT_TRUE(VerifyGraph(g).ok());
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].op, "Sigmoid");
  EXPECT_EQ(g.nodes[1].outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{"y"});
  EXPECT_FALSE(g.FindTensor("c"));
}

TEST(OnnxDropIdentity, KeepsIdentityOfAGraphInputThatIsAnOutput) {
  Graph g;
  g.name = "passthrough";
  ASSERT_TRUE(g.AddInput("x", {2}).ok());
  ASSERT_TRUE(g.AddNode({"id", "Identity", {"x"}, {"y"}, {}}).ok());
  g.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(DropIdentityOps(&g), 0);
  EXPECT_TRUE(VerifyGraph(g).ok());
}

}  // namespace
}  // namespace shoal
