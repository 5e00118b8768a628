// MatMul by a weight becomes Gemm (with reshapes around it for more than two
// axes) and computes the same; MatMuls of two activations stay.
#include "graph/matmul_to_gemm.h"

#include <gtest/gtest.h>

#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

Graph Dense(const Shape& x, const Shape& w) {
  Graph g;
  g.name = "dense";
  EXPECT_TRUE(g.AddInput("x", x).ok());
  EXPECT_TRUE(g.AddWeight("w", w).ok());
  EXPECT_TRUE(g.AddNode({"fc", "MatMul", {"x", "w"}, {"y"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"act", "Relu", {"y"}, {"z"}, {}}).ok());
  g.outputs = {"z"};
  Status s = InferShapes(&g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

// Same output on the reference backend, same weights and input.
void ExpectSameResult(const Graph& before, const Graph& after) {
  const WeightStore w = RandomWeights(before, 5);
  const std::vector<Tensor> in = {
      RandomInput(before.FindTensor("x")->shape, 5)};
  auto a = RunWith(before, w, Backend::kReference, in);
  auto b = RunWith(after, w, Backend::kReference, in);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(a[0].shape, b[0].shape);
  EXPECT_LE(MaxRelDiff(a[0], b[0]), 1e-6);
}

TEST(MatMulToGemm, RowTimesWeightIsAGemm) {
  const Graph before = Dense({1, 64}, {64, 10});
  Graph g = before;
  EXPECT_EQ(MatMulToGemm(&g), 1);
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, "fc");
  EXPECT_EQ(g.nodes[0].op, "Gemm");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(g.nodes[0].attrs.GetInt("transB", 0), 0);
  EXPECT_TRUE(VerifyGraph(g).ok());
  ExpectSameResult(before, g);
}

TEST(MatMulToGemm, TokensAreReshapedToRows) {
  const Graph before = Dense({1, 7, 16}, {16, 12});
  Graph g = before;
  EXPECT_EQ(MatMulToGemm(&g), 1);
  ASSERT_EQ(g.nodes.size(), 4u);
  EXPECT_EQ(g.nodes[0].op, "Reshape");
  EXPECT_EQ(g.nodes[1].op, "Gemm");
  EXPECT_EQ(g.nodes[1].name, "fc");
  EXPECT_EQ(g.nodes[2].op, "Reshape");
  EXPECT_EQ(g.nodes[2].outputs[0], "y");
  EXPECT_EQ(g.tensors.at(g.nodes[1].outputs[0]).shape, (Shape{7, 12}));
  Status s = InferShapes(&g);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(g.tensors.at("y").shape, (Shape{1, 7, 12}));
  EXPECT_TRUE(VerifyGraph(g).ok());
  ExpectSameResult(before, g);
}

// torch's Linear over tokens: MatMul, then Add of the bias. The bias is
// the Gemm's C and the Add goes; a bias read by another node too, or a
// sum that broadcasts, stays an Add.
TEST(MatMulToGemm, BiasAddedNextBecomesTheGemmsC) {
  for (bool rows : {false, true}) {
    Graph before;
    before.name = "linear";
    const Shape x = rows ? Shape{1, 7, 16} : Shape{3, 16};
    ASSERT_TRUE(before.AddInput("x", x).ok());
    ASSERT_TRUE(before.AddWeight("w", {16, 12}).ok());
    ASSERT_TRUE(before.AddWeight("b", {12}).ok());
    ASSERT_TRUE(before.AddNode({"fc", "MatMul", {"x", "w"}, {"y"}, {}}).ok());
    ASSERT_TRUE(before.AddNode({"bias", "Add", {"b", "y"}, {"z"}, {}}).ok());
    ASSERT_TRUE(before.AddNode({"act", "Relu", {"z"}, {"r"}, {}}).ok());
    before.outputs = {"r"};
    ASSERT_TRUE(InferShapes(&before).ok());
    Graph g = before;
    EXPECT_EQ(MatMulToGemm(&g), 1);
    EXPECT_EQ(g.FindNode("bias"), nullptr);
    EXPECT_EQ(g.FindTensor("y"), nullptr);
    const Node* gemm = g.FindNode("fc");
    ASSERT_NE(gemm, nullptr);
    EXPECT_EQ(gemm->inputs.size(), 3u);
    EXPECT_EQ(gemm->inputs[2], "b");
    EXPECT_EQ(g.nodes.size(), rows ? 4u : 2u);
    ASSERT_TRUE(InferShapes(&g).ok());
    EXPECT_TRUE(VerifyGraph(g).ok());
    ExpectSameResult(before, g);
  }
  // The product is also a graph output: the Add stays.
  Graph g = Dense({2, 16}, {16, 4});
  ASSERT_TRUE(g.AddWeight("b", {4}).ok());
  ASSERT_TRUE(g.AddNode({"bias", "Add", {"y", "b"}, {"s"}, {}}).ok());
  g.outputs.push_back("s");
  g.outputs.push_back("y");
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(MatMulToGemm(&g), 1);
  EXPECT_NE(g.FindNode("bias"), nullptr);
}

TEST(MatMulToGemm, TwoActivationsOrAVectorWeightStay) {
  Graph g;
  ASSERT_TRUE(g.AddInput("x", {1, 4, 8}).ok());
  ASSERT_TRUE(g.AddWeight("v", {8}).ok());
  ASSERT_TRUE(g.AddNode({"t", "Transpose", {"x"}, {"xt"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"att", "MatMul", {"x", "xt"}, {"a"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"vec", "MatMul", {"x", "v"}, {"b"}, {}}).ok());
  g.outputs = {"a", "b"};
  Attrs perm;
  perm.Set("perm", std::vector<int64_t>{0, 2, 1});
  g.nodes[0].attrs = perm;
  ASSERT_TRUE(InferShapes(&g).ok());
  EXPECT_EQ(MatMulToGemm(&g), 0);
  EXPECT_EQ(g.nodes[1].op, "MatMul");
  EXPECT_EQ(g.nodes[2].op, "MatMul");
}

}  // namespace
}  // namespace shoal
