// The XNNPACK backend against the reference kernels, op by op: each graph
// runs with every node of the kind under test on XNNPACK (no reference
// step unless the test says which falls back) and agrees within 1e-4.
#include <gtest/gtest.h>

#include "engine/shared_weights.h"
#include "graph/shape_inference.h"
#include "models/builder.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

Graph Build(GraphBuilder& b, const std::vector<std::string>& outputs) {
  auto g = b.Finish(outputs);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : Graph();
}

// Agrees with the reference; returns the XNNPACK executor's stats.
ExecutorStats Agree(const Graph& g, uint64_t seed = 5) {
  ExecutorStats st;
  ExpectBackendsAgree(g, seed, Backend::kXnnpack, &st);
  return st;
}

void ExpectAllXnnpack(const Graph& g) {
  ExecutorStats st = Agree(g);
  EXPECT_EQ(st.reference_steps, 0) << g.name;
  EXPECT_GT(st.xnnpack_steps, 0) << g.name;
}

Graph OneConv(const Shape& x, int64_t out, std::vector<int64_t> kernel,
              const GraphBuilder::ConvOpts& o, const std::string& act = "") {
  GraphBuilder b("conv");
  auto y = b.Conv("conv", b.Input("x", x), out, std::move(kernel), o);
  if (act == "Relu") y = b.Relu(y);
  if (act == "Clip") y = b.Clip(y, 0.f, 6.f);
  return Build(b, {y});
}

TEST(XnnpackOps, Conv) {
  using O = GraphBuilder::ConvOpts;
  ExpectAllXnnpack(OneConv({1, 3, 9, 11}, 8, {3}, O{{1}, {1}}));
  ExpectAllXnnpack(OneConv({1, 3, 9, 11}, 8, {3}, O{{1}, {0}}, "Relu"));
  ExpectAllXnnpack(OneConv({2, 4, 13, 10}, 6, {5}, O{{2}, {2}}, "Clip"));
  ExpectAllXnnpack(OneConv({1, 5, 8, 8}, 7, {1}, O{{1}, {0}}));  // 1x1
  ExpectAllXnnpack(OneConv({1, 5, 9, 9}, 4, {1}, O{{2}, {0}}));  // strided 1x1
  ExpectAllXnnpack(OneConv({1, 4, 12, 12}, 4, {3}, O{{1}, {2}, {2}}));
  ExpectAllXnnpack(OneConv({1, 3, 7, 9}, 5, {3, 2}, O{{2, 1}, {1, 0}}));
  // ONNX pads [top, left, bottom, right]: asymmetric (TensorFlow's SAME).
  ExpectAllXnnpack(OneConv({1, 4, 10, 9}, 6, {3}, O{{2}, {0, 1, 1, 0}}));
  O no_bias{{1}, {1}};
  no_bias.bias = false;
  ExpectAllXnnpack(OneConv({1, 4, 6, 6}, 3, {3}, no_bias));
}

TEST(XnnpackOps, GroupedAndDepthwiseConv) {
  using O = GraphBuilder::ConvOpts;
  ExpectAllXnnpack(OneConv({1, 8, 9, 9}, 12, {3}, O{{1}, {1}, {1}, 2}));
  ExpectAllXnnpack(OneConv({1, 6, 9, 9}, 6, {3}, O{{1}, {1}, {1}, 3}));
  // Depthwise: one filter per channel, and a multiplier of 2.
  ExpectAllXnnpack(OneConv({1, 16, 10, 10}, 16, {3}, O{{1}, {1}, {1}, 16}));
  ExpectAllXnnpack(
      OneConv({1, 16, 11, 11}, 16, {3}, O{{2}, {1}, {1}, 16}, "Clip"));
  ExpectAllXnnpack(OneConv({1, 8, 9, 9}, 16, {3}, O{{1}, {1}, {2}, 8}));
  ExpectAllXnnpack(OneConv({1, 8, 12, 12}, 8, {5}, O{{2}, {2}, {1}, 8}));
}

// A 1-D conv (3-D tensors) is not XNNPACK's here: the reference runs it.
TEST(XnnpackOps, OneDimensionalConvFallsBack) {
  GraphBuilder b("conv1d");
  auto y = b.Conv("conv", b.Input("x", {1, 3, 20}), 4, {3},
                  GraphBuilder::ConvOpts{{1}, {1}});
  Graph g = Build(b, {b.Relu(y)});
  ExecutorStats st;
  ExpectBackendsAgree(g, 5, Backend::kXnnpack, &st);  // the Relu is XNNPACK's
  EXPECT_EQ(st.reference_steps, 1);
}

TEST(XnnpackOps, ConvBatchNormIsFolded) {
  GraphBuilder b("conv_bn");
  auto y =
      b.BatchNorm("bn", b.Conv("conv", b.Input("x", {1, 4, 8, 8}), 6, 3, 1, 1));
  ExecutorStats st = Agree(Build(b, {b.Relu(y)}));
  EXPECT_EQ(st.folded_batchnorms, 1);
  EXPECT_EQ(st.reference_steps, 0);
}

TEST(XnnpackOps, FullyConnected) {
  GraphBuilder b("fc");
  auto x = b.Input("x", {3, 20});
  auto y = b.Relu(b.Linear("fc1", x, 16));
  y = b.Linear("fc2", y, 5, /*bias=*/false);
  ExpectAllXnnpack(Build(b, {y}));
  // B as [K, N] (transB = 0), with a bias of shape [1, N].
  Graph g;
  g.name = "gemm_kn";
  ASSERT_TRUE(g.AddInput("x", {2, 7}).ok());
  ASSERT_TRUE(g.AddWeight("w", {7, 4}).ok());
  ASSERT_TRUE(g.AddWeight("c", {1, 4}).ok());
  ASSERT_TRUE(g.AddNode({"gemm", "Gemm", {"x", "w", "c"}, {"y"}, {}}).ok());
  g.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ExpectAllXnnpack(g);
}

// MatMul of a 3-D activation by a constant [K, N] is a fully connected
// layer over its rows; by another activation it is the reference's.
TEST(XnnpackOps, MatMulByConstant) {
  Graph g;
  g.name = "matmul";
  ASSERT_TRUE(g.AddInput("x", {2, 5, 8}).ok());
  ASSERT_TRUE(g.AddWeight("w", {8, 6}).ok());
  ASSERT_TRUE(g.AddNode({"mm", "MatMul", {"x", "w"}, {"m"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"relu", "Relu", {"m"}, {"y"}, {}}).ok());
  g.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ExpectAllXnnpack(g);
  Graph two;
  two.name = "matmul_two";
  ASSERT_TRUE(two.AddInput("a", {2, 5, 8}).ok());
  ASSERT_TRUE(two.AddInput("b", {2, 8, 3}).ok());
  ASSERT_TRUE(two.AddNode({"r", "Relu", {"a"}, {"ra"}, {}}).ok());
  ASSERT_TRUE(two.AddNode({"mm", "MatMul", {"ra", "b"}, {"y"}, {}}).ok());
  two.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&two).ok());
  ExecutorStats st = Agree(two);
  EXPECT_EQ(st.reference_steps, 1);
}

// Conv (NHWC) -> Flatten (NCHW order: one reorder) -> Gemm, and a
// classifier head after global pooling, where NHWC is plain already.
TEST(XnnpackOps, ConvToFullyConnected) {
  GraphBuilder b("head");
  auto c = b.Relu(b.Conv("conv", b.Input("x", {1, 3, 6, 6}), 4, 3, 1, 1));
  auto y = b.Linear("fc", b.Flatten(c), 10);
  ExpectAllXnnpack(Build(b, {y}));
  GraphBuilder h("gap_head");
  auto d = h.Relu(h.Conv("conv", h.Input("x", {1, 3, 7, 7}), 8, 3, 1, 1));
  auto z = h.Linear("fc", h.Flatten(h.GlobalAvgPool(d)), 10);
  Graph g = Build(h, {z});
  ExecutorStats st = Agree(g);
  EXPECT_EQ(st.reference_steps, 0);
  // The input goes NHWC once; the pooled [1, 8, 1, 1] needs no reorder.
  EXPECT_EQ(st.reorder_steps, 1);
}

TEST(XnnpackOps, Pooling) {
  auto pool = [](const std::string& kind, std::vector<int64_t> k,
                 std::vector<int64_t> s, std::vector<int64_t> p, bool flag) {
    GraphBuilder b(kind);
    auto x = b.Relu(b.Conv("conv", b.Input("x", {1, 3, 11, 12}), 5, 1));
    auto y = kind == "max" ? b.MaxPool(x, k, s, p, /*ceil_mode=*/flag)
                           : b.AvgPool(x, k, s, p, /*count_include_pad=*/flag);
    return Build(b, {y});
  };
  ExpectAllXnnpack(pool("max", {3}, {2}, {1}, false));
  ExpectAllXnnpack(pool("max", {2}, {2}, {0}, false));
  ExpectAllXnnpack(pool("max", {3}, {2}, {0}, true));  // ceil mode
  ExpectAllXnnpack(pool("max", {3, 2}, {1, 2}, {1, 0, 0, 1}, true));
  ExpectAllXnnpack(pool("avg", {3}, {2}, {1}, false));
  ExpectAllXnnpack(pool("avg", {2}, {2}, {0}, false));
  ExpectAllXnnpack(pool("avg", {3}, {1}, {0}, true));  // no pad to count
  // Padding counted in the average: the reference kernel's.
  ExecutorStats st = Agree(pool("avg", {3}, {2}, {1}, true));
  EXPECT_EQ(st.reference_steps, 1);
  // Dilated max pooling.
  GraphBuilder b("dilated");
  Attrs a;
  a.Set("kernel_shape", std::vector<int64_t>{2, 2});
  a.Set("dilations", std::vector<int64_t>{2, 2});
  auto y = b.Op("MaxPool",
                {b.Relu(b.Conv("conv", b.Input("x", {1, 3, 9, 9}), 4, 1))}, a);
  ExpectAllXnnpack(Build(b, {y}));
}

TEST(XnnpackOps, GlobalAveragePool) {
  GraphBuilder b("gap");
  auto x = b.Conv("conv", b.Input("x", {2, 3, 7, 5}), 6, 3, 1, 1);
  ExpectAllXnnpack(Build(b, {b.Relu(b.GlobalAvgPool(x))}));
}

// A residual Add (+ Relu) of two NHWC tensors, an SE gate [N, C, 1, 1]
// over one, and constants broadcast both ways.
TEST(XnnpackOps, BinaryInNhwc) {
  GraphBuilder b("residual");
  auto x = b.Input("x", {1, 8, 6, 7});
  auto c1 = b.Conv("c1", x, 8, 3, 1, 1);
  auto c2 = b.Conv("c2", x, 8, 1);
  auto r = b.Relu(b.Add(c1, c2));
  auto gate = b.Sigmoid(b.GlobalAvgPool(r));
  auto y = b.Mul(gate, r);
  ExpectAllXnnpack(Build(b, {y}));

  for (const Shape& cs : {Shape{8, 1, 1}, Shape{1, 8, 6, 7}, Shape{7},
                          Shape{1, 1, 6, 1}, Shape{}}) {
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      Graph g;
      g.name = std::string(op) + " by " + ShapeToString(cs);
      ASSERT_TRUE(g.AddInput("x", {1, 8, 6, 7}).ok());
      ASSERT_TRUE(g.AddWeight("w", {8, 8, 1, 1}).ok());
      ASSERT_TRUE(g.AddWeight("k", cs).ok());
      ASSERT_TRUE(g.AddNode({"conv", "Conv", {"x", "w"}, {"c"}, {}}).ok());
      // Constant first: XNNPACK broadcasts either operand.
      ASSERT_TRUE(g.AddNode({"op", op, {"k", "c"}, {"y"}, {}}).ok());
      g.outputs = {"y"};
      ASSERT_TRUE(InferShapes(&g).ok());
      ExpectAllXnnpack(g);
    }
  }
}

TEST(XnnpackOps, BinaryPlain) {
  Graph g;
  g.name = "plain";
  ASSERT_TRUE(g.AddInput("a", {3, 1, 5}).ok());
  ASSERT_TRUE(g.AddInput("b", {4, 1}).ok());
  ASSERT_TRUE(g.AddNode({"abs", "Abs", {"b"}, {"p"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"sub", "Sub", {"a", "b"}, {"d"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"one", "Relu", {"p"}, {"q"}, {}}).ok());
  ASSERT_TRUE(g.AddNode({"add", "Add", {"d", "q"}, {"y"}, {}}).ok());
  g.outputs = {"y"};
  ASSERT_TRUE(InferShapes(&g).ok());
  ExpectAllXnnpack(g);
}

TEST(XnnpackOps, Activations) {
  for (const char* op :
       {"Relu", "Sigmoid", "HardSwish", "Abs", "Neg", "LeakyRelu"}) {
    // On a conv's NHWC output and on a plain graph input.
    GraphBuilder b(op);
    auto x = b.Input("x", {1, 4, 5, 6});
    auto c = b.Op(op, {b.Conv("conv", x, 6, 3, 1, 1)});
    auto y = b.Op(op, {b.Input("z", {3, 17})});
    ExpectAllXnnpack(Build(b, {c, y}));
  }
  GraphBuilder b("clip_sqrt");
  auto x = b.Input("x", {2, 33});
  auto y = b.Op("Sqrt", {b.Op("Abs", {x})});
  ExpectAllXnnpack(Build(b, {b.Clip(y, 0.25f, 0.75f)}));
  // No f32 Tanh in this XNNPACK: the reference runs it.
  GraphBuilder t("tanh");
  Graph g = Build(t, {t.Op("Tanh", {t.Relu(t.Input("x", {2, 9}))})});
  ExecutorStats st = Agree(g);
  EXPECT_EQ(st.reference_steps, 1);
}

TEST(XnnpackOps, Softmax) {
  GraphBuilder b("softmax");
  ExpectAllXnnpack(Build(b, {b.Softmax(b.Input("x", {2, 3, 10}))}));
  // Along another axis: the reference kernel's (after an XNNPACK Relu).
  GraphBuilder c("softmax_axis1");
  auto y = c.Softmax(c.Relu(c.Input("x", {2, 3, 10})), 1);
  ExecutorStats st = Agree(Build(c, {y}));
  EXPECT_EQ(st.reference_steps, 1);
}

TEST(XnnpackOps, Concat) {
  // Channels of two NHWC convs (yolov2's route), and of a conv with a
  // plain graph input (a reorder brings it to NHWC).
  GraphBuilder b("concat");
  auto x = b.Input("x", {1, 3, 6, 5});
  auto c1 = b.Conv("c1", x, 4, 3, 1, 1);
  auto c2 = b.Conv("c2", x, 6, 1);
  auto y = b.Concat({c1, c2, x}, 1);
  ExpectAllXnnpack(Build(b, {b.Relu(y)}));
  // Plain tensors along a middle and the last axis.
  GraphBuilder p("concat_plain");
  auto a = p.Input("a", {2, 3, 4});
  auto d = p.Input("d", {2, 5, 4});
  auto e = p.Input("e", {2, 5, 2});
  ExpectAllXnnpack(Build(p, {p.Concat({a, d}, 1), p.Concat({d, e}, -1)}));
}

// Bilinear Resize up and down, by sizes and by scales, in each coordinate
// mode XNNPACK has; nearest is the reference kernel's.
TEST(XnnpackOps, ResizeBilinear) {
  auto resize = [](const std::string& ct, const Shape& out, bool by_scale) {
    GraphBuilder b("resize " + ct + " to " + ShapeToString(out) +
                   (by_scale ? " by scales" : ""));
    Attrs a;
    a.Set("mode", std::string("linear"));
    a.Set("coordinate_transformation_mode", ct);
    const Shape in = {1, 5, 6, 7};
    if (by_scale) {
      std::vector<float> s;
      for (size_t i = 0; i < 4; ++i)
        s.push_back(static_cast<float>(out[i]) / static_cast<float>(in[i]));
      a.Set("scales", s);
    } else {
      a.Set("sizes", std::vector<int64_t>(out.begin(), out.end()));
    }
    auto x = b.Relu(b.Conv("conv", b.Input("x", {1, 3, 6, 7}), 5, 1));
    return Build(b, {b.Op("Resize", {x}, a)});
  };
  for (const char* ct :
       {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}) {
    ExpectAllXnnpack(resize(ct, {1, 5, 12, 14}, false));
    ExpectAllXnnpack(resize(ct, {1, 5, 12, 14}, true));
    ExpectAllXnnpack(resize(ct, {1, 5, 4, 9}, false));
    ExpectAllXnnpack(resize(ct, {1, 5, 3, 3}, false));
  }
}

// `infer --profile` names the kernel of each step; XNNPACK holds the
// weights, packed, and the plain copies are gone.
TEST(XnnpackOps, StepsNameTheirKernelAndWeightsAreHeldOnce) {
  GraphBuilder b("mixed");
  auto x = b.Input("x", {1, 3, 8, 8});
  auto c = b.Conv("conv", x, 8, 3, 1, 1);
  auto l = b.Lrn(b.Relu(c), 3, 1e-4f, 0.75f, 1.f, "lrn");  // no XNNPACK LRN
  auto y = b.Linear("fc", b.Flatten(b.GlobalAvgPool(l)), 4);
  Graph g = Build(b, {y});
  ExecutorOptions o;
  o.backend = Backend::kXnnpack;
  auto ex = Executor::Create(g, RandomWeights(g, 1), o);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  std::map<std::string, std::string> kernel;
  const auto& labels = (*ex)->step_labels();
  for (size_t i = 0; i < labels.size(); ++i)
    kernel[labels[i]] = (*ex)->step_kernels()[i];
  EXPECT_EQ(kernel["conv+Relu"], "xnnpack");
  EXPECT_EQ(kernel["lrn"], "reference");
  EXPECT_EQ(kernel["fc"], "xnnpack");
  const ExecutorStats& st = (*ex)->stats();
  EXPECT_EQ(st.retained_weight_bytes, 0);
  EXPECT_EQ(st.xnnpack_weight_bytes,
            static_cast<int64_t>((8 * 3 * 9 + 8 + 4 * 8 + 4) * sizeof(float)));
  EXPECT_EQ(st.onednn_weight_bytes, 0);
}

// Executors given one SharedWeights and keys share the packed operators:
// a device's tasks on one layer hold its weights once.
TEST(XnnpackOps, ExecutorsSharePackedWeights) {
  auto strip = [](int64_t rows) {
    GraphBuilder b("strip");
    auto c = b.Conv("conv", b.Input("x", {1, 4, rows, 9}), 8, 3, 1, 1);
    auto g = b.Finish({b.Relu(c)});
    EXPECT_TRUE(g.ok());
    return *g;
  };
  const Graph interior = strip(6), edge = strip(2);
  const WeightStore w = RandomWeights(interior, 2);
  auto shared = std::make_shared<SharedWeights>();
  std::map<std::string, std::string> keys;
  for (const auto& [name, t] : w) keys[name] = "blob:" + name;
  std::vector<std::unique_ptr<Executor>> ex;
  for (const Graph* g : {&interior, &edge}) {
    ExecutorOptions o;
    o.backend = Backend::kXnnpack;
    o.shared_weights = shared;
    o.weight_keys = keys;
    auto e = Executor::Create(*g, w, o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    ex.push_back(std::move(e).value());
  }
  EXPECT_EQ(shared->copies(), 1);
  EXPECT_GT(ex[0]->stats().xnnpack_weight_bytes, 0);
  EXPECT_EQ(ex[1]->stats().xnnpack_weight_bytes, 0);
  EXPECT_EQ(ex[1]->stats().shared_weights, 1);
  // The shared operator runs on each executor's buffers and heights,
  // interleaved, and each matches the reference.
  for (int round = 0; round < 2; ++round) {
    for (size_t i = 0; i < ex.size(); ++i) {
      const Graph& g = i == 0 ? interior : edge;
      const Tensor in = RandomInput(g.FindTensor("x")->shape, 3 + i);
      std::vector<Tensor> got;
      ASSERT_TRUE(ex[i]->Run({in}, &got).ok());
      auto want = RunWith(g, w, Backend::kReference, {in});
      ASSERT_EQ(want.size(), 1u);
      EXPECT_LE(MaxRelDiff(got[0], want[0]), 1e-4);
    }
  }
}

TEST(XnnpackOps, ThreadCounts) {
  GraphBuilder b("threads");
  auto c = b.Conv("conv", b.Input("x", {1, 8, 16, 16}), 16, 3, 1, 1);
  Graph g = Build(b, {b.Relu(c)});
  const WeightStore w = RandomWeights(g, 4);
  const Tensor in = RandomInput({1, 8, 16, 16}, 4);
  auto want = RunWith(g, w, Backend::kReference, {in});
  for (int threads : {1, 2, 3}) {
    ExecutorOptions o;
    o.backend = Backend::kXnnpack;
    o.threads = threads;
    auto ex = Executor::Create(g, w, o);
    ASSERT_TRUE(ex.ok());
    std::vector<Tensor> got;
    ASSERT_TRUE((*ex)->Run({in}, &got).ok());
    EXPECT_LE(MaxRelDiff(got[0], want[0]), 1e-4) << threads << " threads";
  }
}

TEST(XnnpackOps, BackendName) {
  auto b = ParseBackend("xnnpack");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, Backend::kXnnpack);
  EXPECT_STREQ(BackendName(Backend::kXnnpack), "xnnpack");
  auto bad = ParseBackend("neon");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("xnnpack"), std::string::npos);
}

}  // namespace
}  // namespace shoal
