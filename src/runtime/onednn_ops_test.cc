// The oneDNN kernels of the activation, Pow, LayerNormalization, binary
// (broadcast and constant operands), Transpose and GELU ops: each runs as a
// oneDNN step (no reference fallback) and agrees with the reference kernel.
#include <gtest/gtest.h>

#include "graph/shape_inference.h"
#include "runtime/backend_compare_test_util.h"

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
  ExpectAllOneDnn(OneOp("ReduceL2", {2, 5, 4, 6}, some));
  Attrs channels;
  channels.Set("axes", std::vector<int64_t>{1});
  ExpectAllOneDnn(OneOp("ReduceL2", {1, 20, 5, 6}, channels));
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

// A conv first, so that the binary op's first operand is in oneDNN's
// blocked layout (with a Sigmoid fused, so that a Div by it is by numbers
// away from 0); then `op` of it and `b` (an activation when `b_input`, else
// a constant), in the order given by `b_first`.
Graph ConvThen(const std::string& op, const Shape& b, bool b_input,
               bool b_first) {
  Graph g;
  g.name = op + " by " + ShapeToString(b) + (b_input ? " input" : " weight") +
           (b_first ? ", first" : "");
  EXPECT_TRUE(g.AddInput("x", {1, 3, 9, 10}).ok());
  EXPECT_TRUE(g.AddWeight("c.w", {20, 3, 3, 3}).ok());
  EXPECT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"yc"}, {}}).ok());
  EXPECT_TRUE(g.AddNode({"s", "Sigmoid", {"yc"}, {"y"}, {}}).ok());
  if (b_input) {
    EXPECT_TRUE(g.AddInput("b", b).ok());
  } else {
    EXPECT_TRUE(g.AddWeight("b", b).ok());
  }
  std::vector<std::string> in = {"y", "b"};
  if (b_first) std::swap(in[0], in[1]);
  EXPECT_TRUE(g.AddNode({"op", op, in, {"z"}, {}}).ok());
  g.outputs = {"z"};
  Status s = InferShapes(&g);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return g;
}

int ReferenceSteps(const Graph& g) {
  ExecutorStats st;
  std::vector<Tensor> in = {RandomInput({1, 3, 9, 10}, 5)};
  if (!g.FindTensor("b")->is_weight())
    in.push_back(RandomInput(g.FindTensor("b")->shape, 6));
  RunWith(g, RandomWeights(g, 5), Backend::kOneDnn, in, &st);
  return st.reference_steps;
}

// Broadcast operands (an SE gate, a LayerScale, a scalar) and constants run
// on oneDNN's binary, either way round where the op commutes.
TEST(OneDnnOps, BinaryBroadcastsAndConstants) {
  // {20, 1, 8} has no fast oneDNN broadcast: a constant is expanded.
  const Shape shapes[] = {{1, 20, 7, 8}, {1, 20, 1, 1}, {20, 1, 1}, {},
                          {8},           {20, 1, 8}};
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (const Shape& b : shapes) {
      for (bool b_input : {true, false}) {
        for (bool b_first : {false, true}) {
          const Graph g = ConvThen(op, b, b_input, b_first);
          ExpectBackendsAgree(g, 5);
          const bool commutes =
              std::string(op) == "Add" || std::string(op) == "Mul";
          const bool full = b == Shape{1, 20, 7, 8} && b_input;
          // Sub and Div with the broadcast operand first have no oneDNN
          // form (src0 must have the output's shape).
          const int want = b_first && !commutes && !full ? 1 : 0;
          EXPECT_EQ(ReferenceSteps(g), want) << g.name;
        }
      }
    }
  }
}

TEST(OneDnnOps, Transpose) {
  Attrs nhwc;
  nhwc.Set("perm", std::vector<int64_t>{0, 2, 3, 1});
  ExpectAllOneDnn(OneOp("Transpose", {1, 6, 5, 7}, nhwc));
  ExpectAllOneDnn(OneOp("Transpose", {4, 9}, {}));  // default: reversed
  // From a conv's blocked output, as in convnext.
  Graph g;
  g.name = "conv then transpose";
  ASSERT_TRUE(g.AddInput("x", {1, 3, 9, 10}).ok());
  ASSERT_TRUE(g.AddWeight("c.w", {20, 3, 3, 3}).ok());
  ASSERT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"y"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"t", "Transpose", {"y"}, {"z"}, nhwc}).ok());
  g.outputs = {"z"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ExpectBackendsAgree(g, 2);
  ExecutorOptions o;
  auto ex = Executor::Create(g, RandomWeights(g, 2), o);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  EXPECT_EQ((*ex)->stats().reference_steps, 0);
  // The transpose reads the conv's layout, whatever it is: no reorder of y.
  for (const auto& label : (*ex)->step_labels()) EXPECT_NE(label, "reorder y");
}

// torch.onnx's GELU: Div by sqrt(2), Erf, Add 1, Mul by x, Mul by 0.5 is
// one oneDNN step; with an intermediate read elsewhere it is not matched.
TEST(OneDnnOps, GeluErfChain) {
  for (bool tapped : {false, true}) {
    Graph g;
    g.name = tapped ? "gelu, erf read twice" : "gelu";
    ASSERT_TRUE(g.AddInput("x", {1, 5, 12}).ok());
    ASSERT_TRUE(g.AddWeight("sqrt2", {}).ok());
    ASSERT_TRUE(g.AddWeight("one", {}).ok());
    ASSERT_TRUE(g.AddWeight("half", {}).ok());
    ASSERT_TRUE(g.AddNode({"div", "Div", {"x", "sqrt2"}, {"d"}, {}}).ok());
    ASSERT_TRUE(g.AddNode({"erf", "Erf", {"d"}, {"e"}, {}}).ok());
    ASSERT_TRUE(g.AddNode({"add", "Add", {"e", "one"}, {"a"}, {}}).ok());
    ASSERT_TRUE(g.AddNode({"mul", "Mul", {"x", "a"}, {"m"}, {}}).ok());
    ASSERT_TRUE(g.AddNode({"half", "Mul", {"m", "half"}, {"y"}, {}}).ok());
    g.outputs = {"y"};
    if (tapped) g.outputs.push_back("e");
    ASSERT_TRUE(InferShapes(&g).ok());
    WeightStore w = RandomWeights(g, 9);
    w["sqrt2"].data = {1.4142135623730951f};
    w["one"].data = {1.f};
    w["half"].data = {0.5f};
    std::vector<Tensor> in = {RandomInput({1, 5, 12}, 9)};
    ExecutorStats st;
    const std::vector<Tensor> ref = RunWith(g, w, Backend::kReference, in);
    const std::vector<Tensor> dnn = RunWith(g, w, Backend::kOneDnn, in, &st);
    ASSERT_EQ(ref.size(), dnn.size());
    for (size_t o = 0; o < ref.size(); ++o)
      for (size_t i = 0; i < ref[o].data.size(); ++i)
        EXPECT_NEAR(ref[o].data[i], dnn[o].data[i], 1e-5f) << g.name;
    EXPECT_EQ(st.steps, tapped ? 5 : 1) << g.name;
    EXPECT_EQ(st.reference_steps, tapped ? 1 : 0) << g.name;  // Erf
  }
}

// Slices with positive steps (vit's q/k/v split, strided ones, negative
// starts) are oneDNN reorders; a negative step is the reference kernel's.
TEST(OneDnnOps, Slice) {
  auto slice = [](std::vector<int64_t> starts, std::vector<int64_t> ends,
                  std::vector<int64_t> axes, std::vector<int64_t> steps) {
    Attrs a;
    a.Set("starts", starts);
    a.Set("ends", ends);
    a.Set("axes", axes);
    a.Set("steps", steps);
    return a;
  };
  ExpectAllOneDnn(OneOp("Slice", {1, 10, 24}, slice({8}, {16}, {-1}, {1})));
  ExpectAllOneDnn(
      OneOp("Slice", {2, 9, 8, 7}, slice({1, -6}, {9, 7}, {1, 3}, {3, 2})));
  ExpectAllOneDnn(OneOp("Slice", {4, 6}, slice({-3}, {100}, {0}, {1})));
  const Graph back =
      OneOp("Slice", {4, 6}, slice({5}, {0}, {1}, {-2}));  // 5, 3, 1
  ExpectBackendsAgree(back, 7);
  // Every second column of an odd extent (a Swin patch merging's
  // x[:, :, 0::2] on a box of 27 columns): a view oneDNN refuses, so the
  // reference kernel takes it, with the same result.
  const Graph odd = OneOp("Slice", {1, 7, 27, 4}, slice({0}, {27}, {2}, {2}));
  ExpectBackendsAgree(odd, 8);
}

// SiLU, x * Sigmoid(x): one post-op of the conv before it, or one swish
// pass after an op that takes no post-op (a Concat).
TEST(OneDnnOps, SwishAfterConvAndAlone) {
  for (bool after_conv : {true, false}) {
    Graph g;
    g.name = after_conv ? "conv, silu" : "concat, silu";
    ASSERT_TRUE(g.AddInput("x", {1, 3, 9, 10}).ok());
    ASSERT_TRUE(g.AddWeight("c.w", {20, 3, 3, 3}).ok());
    ASSERT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"y"}, {}}).ok());
    std::string t = "y";
    if (!after_conv) {
      Attrs axis;  // Concat takes no post-op
      axis.Set("axis", int64_t{1});
      ASSERT_TRUE(g.AddNode({"cat", "Concat", {"y", "y"}, {"t"}, axis}).ok());
      t = "t";
    }
    ASSERT_TRUE(g.AddNode({"sig", "Sigmoid", {t}, {"s"}, {}}).ok());
    ASSERT_TRUE(g.AddNode({"mul", "Mul", {"s", t}, {"z"}, {}}).ok());
    g.outputs = {"z"};
    ASSERT_TRUE(InferShapes(&g).ok());
    ExpectBackendsAgree(g, 4);
    auto ex = Executor::Create(g, RandomWeights(g, 4), {});
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    int computing = 0;
    for (const auto& label : (*ex)->step_labels())
      computing += label.rfind("reorder ", 0) != 0;
    EXPECT_EQ(computing, after_conv ? 1 : 3) << g.name;
    EXPECT_EQ((*ex)->stats().reference_steps, 0);
  }
}

// Constant Pad: a fill and a reorder into the interior, from a plain or a
// blocked input; crops and other modes are the reference kernel's.
TEST(OneDnnOps, PadConstant) {
  Attrs a;
  a.Set("pads", std::vector<int64_t>{0, 1, 2, 0, 0, 3, 1, 4});
  a.Set("value", 0.25f);
  ExpectAllOneDnn(OneOp("Pad", {1, 6, 5, 7}, a));
  Graph g;
  g.name = "conv then pad";
  ASSERT_TRUE(g.AddInput("x", {1, 3, 9, 10}).ok());
  ASSERT_TRUE(g.AddWeight("c.w", {20, 3, 3, 3}).ok());
  ASSERT_TRUE(g.AddNode({"c", "Conv", {"x", "c.w"}, {"y"}, {}}).ok());
  Attrs hw;
  hw.Set("pads", std::vector<int64_t>{0, 0, 1, 0, 0, 0, 0, 1});
  ASSERT_TRUE(g.AddNode({"p", "Pad", {"y"}, {"z"}, hw}).ok());
  g.outputs = {"z"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ExpectBackendsAgree(g, 2);
  Attrs crop;
  crop.Set("pads", std::vector<int64_t>{0, -1, 0, 2});
  ExpectBackendsAgree(OneOp("Pad", {3, 6}, crop), 7);
  Attrs reflect = a;
  reflect.Set("mode", std::string("reflect"));
  ExpectBackendsAgree(OneOp("Pad", {1, 6, 5, 7}, reflect), 7);
}

}  // namespace
}  // namespace shoal
