// Quantized (QDQ) layers on XNNPACK against the reference backend's integer
// kernels (engine/xnnpack/int8_layer.h). Where a layer's output only goes
// on to the next QuantizeLinear, XNNPACK's qc8 convolution computes that
// Q's int8 values: each within one quantization step of the reference's,
// and few off at all. Everywhere else the layer sums its integer values on
// XNNPACK's f32 kernels, exact to float rounding (1e-5 of the largest
// output). Models are quantized as `shoal quantize` does it (QuantizeStatic:
// per-channel symmetric weights, per-tensor activations, zero point -128
// for a range that is never negative and 0 otherwise).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/calibrate.h"
#include "engine/executor.h"
#include "engine/node_kernels.h"
#include "engine/shared_weights.h"
#include "graph/fuse_batchnorm.h"
#include "graph/shape_inference.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "runtime/int8_test_util.h"

namespace shoal {
namespace {

using int8_test::UniformInputs;

struct Ran {
  std::vector<Tensor> y;  // the first output, per input
  ExecutorStats stats;
  std::map<std::string, NodeKernel> nodes;  // by node name
};

Ran RunModel(const Model& m, Backend backend, const std::vector<Tensor>& xs) {
  Ran r;
  ExecutorOptions o;
  o.backend = backend;
  auto ex = Executor::Create(m.graph, m.weights, o);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return r;
  r.stats = (*ex)->stats();
  auto nodes = KernelsOfNodes(m.graph, **ex);
  EXPECT_TRUE(nodes.ok());
  if (nodes.ok())
    for (const NodeKernel& n : *nodes) r.nodes[n.node] = n;
  for (const Tensor& x : xs) {
    std::vector<Tensor> y;
    const Status s = (*ex)->Run({x}, &y);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return r;
    r.y.push_back(y[0]);
  }
  return r;
}

// `g` with seeded weights, quantized on 16 inputs uniform in [lo, hi] as
// `shoal quantize` does it (BatchNorms folded first).
Model Quantized(const Graph& g, float lo, float hi, uint32_t seed = 7) {
  Model m;
  m.graph = g;
  m.weights = RandomWeights(g, seed);
  EXPECT_TRUE(FuseBatchNorm(&m).ok());
  const Shape& in = g.FindTensor(g.inputs[0])->shape;
  auto s = QuantizeStatic(UniformInputs(in, 16, lo, hi, seed), &m);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return m;
}

// The graph's output becomes the int8 values node "probe" reads: the
// output of the Q that the layer under test feeds.
void OutputProbeInput(Model* m) {
  const Graph& g = m->graph;
  const Node* probe = g.FindNode("probe");
  ASSERT_NE(probe, nullptr);
  const int dq = g.ProducerIndex(probe->inputs[0]);
  ASSERT_GE(dq, 0);
  ASSERT_EQ(g.nodes[dq].op, "DequantizeLinear");
  const std::string q_out = g.nodes[dq].inputs[0];
  const int q = g.ProducerIndex(q_out);
  ASSERT_GE(q, 0);
  ASSERT_EQ(g.nodes[q].op, "QuantizeLinear");
  m->graph.outputs = {q_out};
}

// Every int8 value of `got` within one step of `want`'s, and fewer than 1 %
// off at all; the values must vary (a constant output would prove
// nothing). Returns the fraction off by one.
double ExpectWithinOneStep(const std::vector<Tensor>& got,
                           const std::vector<Tensor>& want) {
  EXPECT_EQ(got.size(), want.size());
  int64_t off = 0, n = 0;
  std::map<float, int> distinct;
  for (size_t s = 0; s < got.size() && s < want.size(); ++s) {
    EXPECT_EQ(got[s].shape, want[s].shape);
    if (got[s].shape != want[s].shape) return 1;
    for (int64_t i = 0; i < got[s].size(); ++i) {
      const float a = got[s].data[i], b = want[s].data[i];
      EXPECT_EQ(a, std::nearbyint(a)) << "element " << i;
      EXPECT_LE(std::fabs(a - b), 1.f) << "sample " << s << " element " << i;
      off += a != b;
      ++n;
      ++distinct[b];
    }
  }
  EXPECT_GT(distinct.size(), 8u) << "the reference's int8 values barely vary";
  const double frac = n > 0 ? static_cast<double>(off) / n : 1;
  EXPECT_LT(frac, 0.01) << off << " of " << n << " int8 values off by one";
  return frac;
}

// Only the graph input's QuantizeLinear runs on the reference kernels (Q
// is elementwise, no MACs, and exact there); every other step is XNNPACK's.
void ExpectOnlyInputQuantizeOnReference(const Ran& r) {
  for (const auto& [name, k] : r.nodes) {
    if (k.kernel == "reference") {
      EXPECT_EQ(k.op, "QuantizeLinear") << name;
    }
  }
  EXPECT_EQ(r.stats.reference_steps, 1);
}

std::string ImplOf(const Ran& r, const std::string& node) {
  auto it = r.nodes.find(node);
  if (it == r.nodes.end()) return "(no node " + node + ")";
  return it->second.kernel + " " + it->second.impl;
}

Graph Finish(GraphBuilder& b, const std::string& out) {
  auto g = b.Finish({out});
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return g.ok() ? *g : Graph();
}

using O = GraphBuilder::ConvOpts;

// x -> conv -> [act] -> [MaxPool] -> probe (a 1x1 conv, whose input Q the
// conv's qc8 operator computes).
Graph ConvThenProbe(const Shape& x, int64_t out, std::vector<int64_t> kernel,
                    const O& o, const std::string& act, bool pool = false) {
  GraphBuilder b("qc8_conv");
  auto y = b.Conv("conv", b.Input("x", x), out, std::move(kernel), o);
  if (act == "Relu") y = b.Relu(y);
  if (act == "Clip") y = b.Clip(y, 0.f, 6.f);
  if (pool) y = b.MaxPool(y, {3}, {2}, {1}, false, "pool");
  return Finish(b, b.Conv("probe", y, 4, 1));
}

// The qc8 patterns, each with an input quantized with zero point 0
// (signed range) and -128 (never negative).
void ExpectQc8(const Graph& g, const std::string& layer = "conv") {
  for (float lo : {-1.f, 0.f}) {
    SCOPED_TRACE(g.name + (lo < 0 ? ", signed input" : ", input >= 0"));
    Model m = Quantized(g, lo, 1.f);
    OutputProbeInput(&m);
    const Shape& in = g.FindTensor(g.inputs[0])->shape;
    const auto xs = UniformInputs(in, 4, lo, 1.f, 11);
    const Ran ref = RunModel(m, Backend::kReference, xs);
    const Ran xnn = RunModel(m, Backend::kXnnpack, xs);
    EXPECT_EQ(ImplOf(xnn, layer), "xnnpack qc8");
    ExpectOnlyInputQuantizeOnReference(xnn);
    const double off = ExpectWithinOneStep(xnn.y, ref.y);
    std::printf("%s, %s: %.2f %% of int8 values one step off\n", g.name.c_str(),
                lo < 0 ? "signed input" : "input >= 0", 100 * off);
  }
}

TEST(XnnpackInt8, Qc8Conv) {
  ExpectQc8(ConvThenProbe({1, 3, 12, 12}, 8, {3}, O{{1}, {1}}, "Relu"));
  ExpectQc8(ConvThenProbe({1, 4, 13, 10}, 6, {5}, O{{2}, {2}}, "Clip"));
  // No activation: the Q's full range.
  ExpectQc8(ConvThenProbe({1, 5, 8, 8}, 7, {1}, O{{1}, {0}}, ""));
  ExpectQc8(ConvThenProbe({1, 4, 12, 12}, 6, {3}, O{{1}, {2}, {2}}, "Relu"));
  // ONNX pads [top, left, bottom, right]: asymmetric.
  ExpectQc8(ConvThenProbe({1, 4, 10, 9}, 6, {3}, O{{2}, {0, 1, 1, 0}}, "Relu"));
  O no_bias{{1}, {1}};
  no_bias.bias = false;
  ExpectQc8(ConvThenProbe({1, 4, 6, 6}, 5, {3}, no_bias, "Relu"));
}

TEST(XnnpackInt8, Qc8GroupedAndDepthwiseConv) {
  ExpectQc8(ConvThenProbe({1, 8, 9, 9}, 12, {3}, O{{1}, {1}, {1}, 2}, "Relu"));
  ExpectQc8(
      ConvThenProbe({1, 16, 10, 10}, 16, {3}, O{{1}, {1}, {1}, 16}, "Clip"));
  ExpectQc8(
      ConvThenProbe({1, 16, 11, 11}, 16, {3}, O{{2}, {1}, {1}, 16}, "Relu"));
  // Depthwise with a multiplier of 2.
  ExpectQc8(ConvThenProbe({1, 8, 9, 9}, 16, {3}, O{{1}, {1}, {1}, 8}, ""));
}

// conv -> Relu -> MaxPool -> Q: the pooling runs on the int8 values.
TEST(XnnpackInt8, Qc8ConvThenMaxPool) {
  const Graph g =
      ConvThenProbe({1, 4, 12, 12}, 8, {3}, O{{1}, {1}}, "Relu", true);
  ExpectQc8(g);
  Model m = Quantized(g, 0.f, 1.f);
  const Ran xnn =
      RunModel(m, Backend::kXnnpack, UniformInputs({1, 4, 12, 12}, 1, 0, 1, 3));
  EXPECT_EQ(ImplOf(xnn, "pool"), "xnnpack s8");
}

// Gemm and MatMul by a constant: a 1x1 qc8 convolution over the rows.
TEST(XnnpackInt8, Qc8FullyConnected) {
  {
    GraphBuilder b("qc8_gemm");
    auto y = b.Relu(b.Linear("fc", b.Input("x", {3, 40}), 24));
    ExpectQc8(Finish(b, b.Linear("probe", y, 5)), "fc");
  }
  {
    // LeNet's tail: conv -> Relu -> Flatten -> Q -> Gemm.
    GraphBuilder b("qc8_flatten");
    auto y = b.Relu(b.Conv("conv", b.Input("x", {1, 6, 6, 6}), 10, 3));
    ExpectQc8(Finish(b, b.Linear("probe", b.Flatten(y), 5)));
  }
  {
    // A spatial output flattened: NHWC int8 values reordered to plain.
    GraphBuilder b("qc8_flatten_spatial");
    auto y = b.Relu(b.Conv("conv", b.Input("x", {1, 3, 8, 8}), 6, 3));
    ExpectQc8(Finish(b, b.Linear("probe", b.Flatten(y), 5)));
  }
}

Graph MatMulGraph(bool probe) {
  Graph g;
  g.name = probe ? "qc8_matmul" : "f32_sums_matmul";
  EXPECT_TRUE(g.AddInput("x", {2, 5, 16}).ok());
  EXPECT_TRUE(g.AddWeight("w1", {16, 12}).ok());
  EXPECT_TRUE(g.AddNode(Node{"mm", "MatMul", {"x", "w1"}, {"h"}, {}}).ok());
  std::string out = "h";
  if (probe) {
    EXPECT_TRUE(g.AddNode(Node{"relu", "Relu", {"h"}, {"hr"}, {}}).ok());
    EXPECT_TRUE(g.AddWeight("w2", {12, 4}).ok());
    EXPECT_TRUE(
        g.AddNode(Node{"probe", "MatMul", {"hr", "w2"}, {"p"}, {}}).ok());
    out = "p";
  }
  g.outputs = {out};
  EXPECT_TRUE(InferShapes(&g).ok());
  return g;
}

TEST(XnnpackInt8, Qc8MatMulByConstant) { ExpectQc8(MatMulGraph(true), "mm"); }

// Where the output is not only requantized, f32 sums: exact to rounding.
void ExpectF32Sums(const Graph& g, const std::string& layer) {
  for (float lo : {-1.f, 0.f}) {
    SCOPED_TRACE(g.name + (lo < 0 ? ", signed input" : ", input >= 0"));
    Model m = Quantized(g, lo, 1.f);
    const Shape& in = g.FindTensor(g.inputs[0])->shape;
    const auto xs = UniformInputs(in, 3, lo, 1.f, 13);
    const Ran ref = RunModel(m, Backend::kReference, xs);
    const Ran xnn = RunModel(m, Backend::kXnnpack, xs);
    EXPECT_EQ(ImplOf(xnn, layer), "xnnpack f32-sums");
    ExpectOnlyInputQuantizeOnReference(xnn);
    int8_test::ExpectSameOutputs(xnn.y, ref.y, 1e-5f);
  }
}

TEST(XnnpackInt8, F32SumsWhereTheOutputIsNotOnlyRequantized) {
  {
    // A residual: conv -> Add; the Add reads the conv's f32 output.
    GraphBuilder b("f32_sums_add");
    auto x = b.Input("x", {1, 8, 10, 10});
    auto y = b.Conv("conv", x, 8, 3, 1, 1);
    ExpectF32Sums(Finish(b, b.Relu(b.Add(y, x))), "conv");
  }
  {
    // The graph's output, with a Relu fused after the scales and bias.
    GraphBuilder b("f32_sums_out");
    auto y = b.Relu(b.Conv("conv", b.Input("x", {1, 6, 9, 9}), 10, 3, 2, 1));
    ExpectF32Sums(Finish(b, y), "conv");
  }
  {
    GraphBuilder b("f32_sums_depthwise");
    auto y = b.Conv("conv", b.Input("x", {1, 12, 9, 9}), 12, 3, 1, 1, 12);
    ExpectF32Sums(Finish(b, y), "conv");
  }
  {
    GraphBuilder b("f32_sums_grouped");
    auto y = b.Conv("conv", b.Input("x", {1, 8, 7, 7}), 6, 3, 1, 0, 2, false);
    ExpectF32Sums(Finish(b, y), "conv");
  }
  {
    GraphBuilder b("f32_sums_gemm");
    ExpectF32Sums(Finish(b, b.Linear("fc", b.Input("x", {2, 30}), 7)), "fc");
  }
  ExpectF32Sums(MatMulGraph(false), "mm");
}

// Executors given one SharedWeights (a device's interior and edge tasks on
// the same layers) share the packed int8 and f32-sums operators: each
// weight is held once, and both agree with the reference.
TEST(XnnpackInt8, ExecutorsSharePackedOperators) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  ASSERT_NE(e, nullptr);
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  const Model m = Quantized(*g, 0.f, 1.f, 2);
  auto shared = std::make_shared<SharedWeights>();
  std::map<std::string, std::string> keys;
  for (const auto& [name, t] : m.weights) keys[name] = "blob:" + name;
  std::vector<std::unique_ptr<Executor>> ex;
  for (int i = 0; i < 2; ++i) {
    ExecutorOptions o;
    o.backend = Backend::kXnnpack;
    o.shared_weights = shared;
    o.weight_keys = keys;
    auto x = Executor::Create(m.graph, m.weights, o);
    ASSERT_TRUE(x.ok()) << x.status().ToString();
    ex.push_back(std::move(x).value());
  }
  EXPECT_GT(ex[0]->stats().xnnpack_weight_bytes, 0);
  // All the second holds of its own: fc2's (f32 sums) 10 scales and 10
  // biases, per-channel constants of its step.
  EXPECT_EQ(ex[1]->stats().xnnpack_weight_bytes,
            static_cast<int64_t>(2 * 10 * sizeof(float)));
  // conv1-3 and fc1 (qc8), fc2 (f32 sums).
  EXPECT_EQ(ex[1]->stats().shared_weights, 5);
  const auto xs = UniformInputs(e->input_shape, 2, 0.f, 1.f, 9);
  const Ran ref = RunModel(m, Backend::kReference, xs);
  for (auto& x : ex) {
    std::vector<Tensor> got;
    for (const Tensor& in : xs) {
      std::vector<Tensor> y;
      ASSERT_TRUE(x->Run({in}, &y).ok());
      got.push_back(y[0]);
    }
    int8_test::ExpectSameOutputs(got, ref.y, 0.03f);
  }
}

// A quantized zoo model end to end, and where its MACs run.
struct ZooResult {
  double qc8_share = 0, f32_sums_share = 0, xnnpack_share = 0;
};

ZooResult ExpectZooModel(const std::string& name, const Shape& in, int samples,
                         float tol) {
  SCOPED_TRACE(name);
  const ZooEntry* e = Zoo::Global().Find(name);
  EXPECT_NE(e, nullptr);
  if (e == nullptr) return {};
  auto g = e->build(in);
  EXPECT_TRUE(g.ok());
  Model m = Quantized(*g, 0.f, 1.f, 2);
  const auto xs = UniformInputs(in, samples, 0.f, 1.f, 5);
  const Ran ref = RunModel(m, Backend::kReference, xs);
  const Ran xnn = RunModel(m, Backend::kXnnpack, xs);
  EXPECT_EQ(xnn.y.size(), ref.y.size());
  for (size_t s = 0; s < xnn.y.size() && s < ref.y.size(); ++s) {
    const auto& a = xnn.y[s].data;
    const auto& b = ref.y[s].data;
    EXPECT_EQ(std::max_element(a.begin(), a.end()) - a.begin(),
              std::max_element(b.begin(), b.end()) - b.begin())
        << "top-1 of sample " << s;
  }
  int8_test::ExpectSameOutputs(xnn.y, ref.y, tol);
  double worst = 0;
  for (size_t s = 0; s < xnn.y.size() && s < ref.y.size(); ++s) {
    float scale = 0, diff = 0;
    for (int64_t i = 0; i < ref.y[s].size(); ++i) {
      scale = std::max(scale, std::fabs(ref.y[s].data[i]));
      diff = std::max(diff, std::fabs(xnn.y[s].data[i] - ref.y[s].data[i]));
    }
    worst = std::max(worst, scale > 0 ? static_cast<double>(diff / scale) : 0);
  }
  std::printf("%s: outputs within %.3g of the largest output\n", name.c_str(),
              worst);
  int64_t total = 0, xnn_macs = 0, qc8 = 0, sums = 0;
  for (const auto& [node, k] : xnn.nodes) {
    total += k.macs;
    if (k.kernel != "xnnpack") continue;
    xnn_macs += k.macs;
    qc8 += k.impl == "qc8" ? k.macs : 0;
    sums += k.impl == "f32-sums" ? k.macs : 0;
  }
  ZooResult r;
  r.xnnpack_share = static_cast<double>(xnn_macs) / total;
  r.qc8_share = static_cast<double>(qc8) / total;
  r.f32_sums_share = static_cast<double>(sums) / total;
  EXPECT_GE(r.xnnpack_share, 0.95);
  // Every quantized layer's MACs in one of the two int8 paths.
  EXPECT_EQ(qc8 + sums, xnn_macs);
  // Each weight held once: no plain copy left beside the packed ones.
  EXPECT_EQ(xnn.stats.retained_weight_bytes, 0);
  return r;
}

// LeNet-5: conv1 and conv2 (-> Relu -> MaxPool -> Q), conv3 (-> Relu ->
// Flatten -> Q) and fc1 (-> Relu -> Q) on qc8; fc2, the output, on f32
// sums. A qc8 layer's int8 output is off by one step in well under 1 % of
// its values; each such value moves the next layer's sums by one step of
// its input times a weight, and the logits by what the layers after make
// of it. Measured: 1.4 % of the largest logit (8 inputs, x86); the bound
// is 3 %, with top-1 equal.
TEST(XnnpackInt8, QuantizedLeNet5) {
  const ZooResult r = ExpectZooModel("lenet5", {1, 1, 28, 28}, 8, 0.03f);
  EXPECT_GT(r.qc8_share, 0.95);
  EXPECT_GT(r.f32_sums_share, 0);
  std::printf("lenet5 int8 on XNNPACK: %.1f %% of MACs qc8, %.1f %% f32 sums\n",
              100 * r.qc8_share, 100 * r.f32_sums_share);
}

// ResNet-18 on 64x64 inputs: the first conv of each block on qc8 (-> Relu
// -> Q), the second and the downsampling convs on f32 sums (an Add reads
// them), as is conv1 (its MaxPool's output is a residual too). The
// one-step differences of the qc8 layers reach the logits through twenty
// layers and the residuals: measured 1.0 % of the largest logit; the bound
// is 5 %, with top-1 equal.
TEST(XnnpackInt8, QuantizedResNet18) {
  const ZooResult r = ExpectZooModel("resnet18", {1, 3, 64, 64}, 2, 0.05f);
  EXPECT_GT(r.qc8_share, 0.3);
  EXPECT_GT(r.f32_sums_share, 0.3);
  std::printf(
      "resnet18 int8 on XNNPACK: %.1f %% of MACs qc8, %.1f %% f32 sums\n",
      100 * r.qc8_share, 100 * r.f32_sums_share);
}

}  // namespace
}  // namespace shoal
