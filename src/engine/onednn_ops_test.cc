// The oneDNN kernels of the activation, Pow and LayerNormalization ops:
// each runs as a oneDNN step (no reference fallback) and agrees with the
// reference kernel.
#include <gtest/gtest.h>

#include "engine/backend_compare.h"
#include "graph/shape_inference.h"

namespace shoal {
namespace {

// x -> Abs -> op (so that Sqrt and Pow see non-negative data).
Graph OneOp(const std::string& op, const Shape& x, Attrs attrs = {},
            const std::vector<Shape>& weights = {}) {
  Graph g;
  g.name = op;
  EXPECT_TRUE(g.AddInput("x", x).ok());
  EXPECT_TRUE(g.AddNode({"abs", "Abs", {"x"}, {"a"}, {}}).ok());
  std::vector<std::string> in = {"a"};
  for (size_t i = 0; i < weights.size(); ++i) {
    const std::string w = "w" + std::to_string(i);
    EXPECT_TRUE(g.AddWeight(w, weights[i]).ok());
    in.push_back(w);
  }
  EXPECT_TRUE(g.AddNode({"op", op, in, {"y"}, std::move(attrs)}).ok());
  g.outputs = {"y"};
  Status s = InferShapes(&g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

void ExpectAllOneDnn(const Graph& g) {
  ExpectBackendsAgree(g, 7);
  ExecutorStats st;
  RunWith(g, RandomWeights(g, 7), Backend::kOneDnn,
          {RandomInput(g.FindTensor("x")->shape, 7)}, &st);
  EXPECT_EQ(st.reference_steps, 0) << g.name;
}

TEST(OneDnnOps, Activations) {
  for (const char* op : {"HardSigmoid", "Sqrt", "Exp", "Tanh", "Neg"}) {
    ExpectAllOneDnn(OneOp(op, {1, 6, 5, 7}));
  }
  Attrs hs;
  hs.Set("alpha", 1.f / 6);
  hs.Set("beta", 0.5f);
  ExpectAllOneDnn(OneOp("HardSigmoid", {2, 9}, hs));
}

TEST(OneDnnOps, PowByAScalar) {
  ExpectAllOneDnn(OneOp("Pow", {1, 4, 6}, {}, {Shape{}}));
  // An exponent per element is the reference kernel's.
  Graph g = OneOp("Pow", {1, 4, 6}, {}, {Shape{6}});
  ExpectBackendsAgree(g, 7);
}

TEST(OneDnnOps, LayerNormalization) {
  ExpectAllOneDnn(OneOp("LayerNormalization", {1, 7, 16}, {}, {{16}, {16}}));
  Attrs a;
  a.Set("axis", int64_t{1});
  a.Set("epsilon", 1e-3f);
  ExpectAllOneDnn(OneOp("LayerNormalization", {2, 5, 6}, a, {{5, 6}}));
  // Scale broadcast over the normalised axes.
  ExpectAllOneDnn(OneOp("LayerNormalization", {2, 5, 6}, a, {{1, 6}, {5, 1}}));
}

TEST(OneDnnOps, ReduceMean) {
  Attrs some;
  some.Set("axes", std::vector<int64_t>{1, -1});
  some.Set("keepdims", int64_t{0});
  ExpectAllOneDnn(OneOp("ReduceMean", {2, 5, 4, 6}, some));
  Attrs all;
  ExpectAllOneDnn(OneOp("ReduceMean", {3, 7}, all));
}

// Linear Resize by sizes and by scales runs on oneDNN's resampling and
// agrees with the reference; nearest is the reference kernel's.
TEST(OneDnnOps, ResizeLinear) {
  for (const char* ct : {"half_pixel", "pytorch_half_pixel"}) {
    Attrs by_size;
    by_size.Set("mode", std::string("linear"));
    by_size.Set("coordinate_transformation_mode", std::string(ct));
    by_size.Set("sizes", std::vector<int64_t>{1, 3, 11, 13});
    ExpectAllOneDnn(OneOp("Resize", {1, 3, 5, 7}, by_size));
    Attrs by_scale = by_size;
    by_scale.Erase("sizes");
    by_scale.Set("scales", std::vector<float>{1.f, 1.f, 2.f, 3.f});
    ExpectAllOneDnn(OneOp("Resize", {1, 3, 5, 7}, by_scale));
  }
  Attrs nearest;
  nearest.Set("mode", std::string("nearest"));
  nearest.Set("sizes", std::vector<int64_t>{1, 3, 10, 14});
  ExpectBackendsAgree(OneOp("Resize", {1, 3, 5, 7}, nearest), 7);
}

// Attention's MatMul of two activations (batch axes broadcast) and a MatMul
// by a 3-D weight run on oneDNN's matmul.
TEST(OneDnnOps, MatMul) {
  Graph g;
  g.name = "matmul";
  ASSERT_TRUE(g.AddInput("x", {2, 3, 7, 8}).ok());
  ASSERT_TRUE(g.AddInput("k", {3, 8, 7}).ok());
  ASSERT_TRUE(g.AddWeight("w", {3, 7, 5}).ok());
  ASSERT_TRUE(g.AddNode({"qk", "MatMul", {"x", "k"}, {"s"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"sw", "MatMul", {"s", "w"}, {"y"}, {}}).ok());
  g.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ExpectBackendsAgree(g, 3);
  ExecutorStats st;
  RunWith(g, RandomWeights(g, 3), Backend::kOneDnn,
          {RandomInput({2, 3, 7, 8}, 3), RandomInput({3, 8, 7}, 4)}, &st);
  EXPECT_EQ(st.reference_steps, 0);
}

}  // namespace
}  // namespace shoal
