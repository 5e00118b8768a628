// Quantized test models for the int8 tests of both backends (header-only):
// LeNet-5 quantized, a graph fragment whose input is already quantized, and
// the f32 evaluation of any QDQ model (its layers kept off int8 kernels).
#ifndef SHOAL_ENGINE_INT8_TEST_UTIL_H_
#define SHOAL_ENGINE_INT8_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "engine/calibrate.h"
#include "engine/executor.h"
#include "graph/quantization.h"
#include "graph/shape_inference.h"
#include "models/zoo.h"

namespace shoal {
namespace int8_test {

inline std::vector<Tensor> UniformInputs(const Shape& s, int n, float lo,
                                         float hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    Tensor t(s);
    for (float& v : t.data) v = u(rng);
    out.push_back(std::move(t));
  }
  return out;
}

// Seeded int8 values (exact integers in f32) in [lo, hi].
inline std::vector<Tensor> Int8Inputs(const Shape& s, int n, uint32_t seed,
                                      int lo = kInt8Min, int hi = kInt8Max) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    Tensor t(s);
    for (float& v : t.data) v = static_cast<float>(u(rng));
    out.push_back(std::move(t));
  }
  return out;
}

// LeNet-5 with random weights, quantized on 20 random images.
inline Model QuantizedLeNet() {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  Model m;
  m.graph = e->build(e->input_shape).value();
  m.weights = RandomWeights(m.graph, 2);
  EXPECT_TRUE(
      QuantizeStatic(UniformInputs({1, 1, 28, 28}, 20, 0.f, 1.f, 3), &m).ok());
  return m;
}

inline Node QdqNode(const std::string& op, const std::string& name,
                    const std::string& in, const std::string& out,
                    const QuantParams& p) {
  Node n;
  n.op = op;
  n.name = name;
  n.inputs = {in};
  n.outputs = {out};
  SetQuantParams(p, &n);
  return n;
}

inline QuantParams PerTensor(float scale, int32_t zero) {
  QuantParams p;
  p.scale = {scale};
  p.zero_point = {zero};
  return p;
}

// A fragment of a quantized model as a plan cut at a Q's output leaves it:
// the graph input "xq" [1, 4, 8, 8] holds int8 values (zero point
// `x_zero`, scale 0.05), read by DequantizeLinear -> Conv(DQ(int8 w, per
// output channel), bias, pads 1) -> Relu. With `dq_is_output` the
// dequantized input is a graph output too.
inline Model QuantizedInputFragment(int32_t x_zero, bool dq_is_output = false) {
  Model m;
  Graph& g = m.graph;
  g.name = "fragment";
  EXPECT_TRUE(g.AddInput("xq", {1, 4, 8, 8}).ok());
  EXPECT_TRUE(g.AddWeight("wq", {6, 4, 3, 3}).ok());
  EXPECT_TRUE(g.AddWeight("b", {6}).ok());
  QuantParams wp;
  for (int c = 0; c < 6; ++c) {
    wp.scale.push_back(0.01f * (c + 1));
    wp.zero_point.push_back(0);
  }
  wp.axis = 0;
  EXPECT_TRUE(g.AddNode(QdqNode("DequantizeLinear", "dq_x", "xq", "x",
                                PerTensor(0.05f, x_zero)))
                  .ok());
  EXPECT_TRUE(
      g.AddNode(QdqNode("DequantizeLinear", "dq_w", "wq", "w", wp)).ok());
  Node conv;
  conv.op = "Conv";
  conv.name = "conv";
  conv.inputs = {"x", "w", "b"};
  conv.outputs = {"c"};
  conv.attrs.Set("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_TRUE(g.AddNode(conv).ok());
  Node relu;
  relu.op = "Relu";
  relu.name = "relu";
  relu.inputs = {"c"};
  relu.outputs = {"y"};
  EXPECT_TRUE(g.AddNode(relu).ok());
  g.outputs = {"y"};
  if (dq_is_output) g.outputs.push_back("x");
  EXPECT_TRUE(InferShapes(&g).ok());
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> q(-127, 127);
  Tensor w({6, 4, 3, 3});
  for (float& v : w.data) v = static_cast<float>(q(rng));
  Tensor b({6});
  for (int c = 0; c < 6; ++c) b.data[c] = 0.1f * (c - 3);
  m.weights["wq"] = w;
  m.weights["b"] = b;
  return m;
}

// The part of quantized LeNet-5 after the Q of its second conv's input, as
// a plan cut there leaves it to the receiving device: the graph input is
// that Q's output (int8 values, zero point -128 after a ReLU), then
// DQ -> conv2 ... -> the Gemms.
inline Model LeNetCutAfterSecondQuantize() {
  const Model full = QuantizedLeNet();
  const Graph& g = full.graph;
  int convs = 0;
  std::string cut;
  for (const Node& n : g.nodes) {
    if (n.op != "Conv" || ++convs != 2) continue;
    const Node& dq = g.nodes[g.ProducerIndex(n.inputs[0])];
    cut = dq.inputs[0];
  }
  EXPECT_FALSE(cut.empty());
  Model m;
  m.graph.name = "lenet5_tail";
  EXPECT_TRUE(m.graph.AddInput(cut, g.FindTensor(cut)->shape).ok());
  const int first = g.ProducerIndex(cut) + 1;
  for (size_t i = first; i < g.nodes.size(); ++i) {
    for (const std::string& in : g.nodes[i].inputs) {
      const TensorInfo* t = g.FindTensor(in);
      if (t && t->is_weight() && !m.graph.FindTensor(in)) {
        EXPECT_TRUE(m.graph.AddWeight(in, t->shape).ok());
        m.weights[in] = full.weights.at(in);
      }
    }
    EXPECT_TRUE(m.graph.AddNode(g.nodes[i]).ok());
  }
  m.graph.outputs = g.outputs;
  EXPECT_TRUE(InferShapes(&m.graph).ok());
  return m;
}

// x (f32, `a_shape`, last axis 8) -> Q -> DQ -> MatMul(DQ(int8 w [8, 6],
// scaled per column, zero points 0)): a quantized MatMul by a constant
// weight, the input quantized with zero point `x_zero` (0 or -128).
inline Model QuantizedMatMulByWeight(const Shape& a_shape, int32_t x_zero) {
  Model m;
  Graph& g = m.graph;
  g.name = "matmul_by_weight";
  EXPECT_TRUE(g.AddInput("x", a_shape).ok());
  EXPECT_TRUE(g.AddWeight("wq", {8, 6}).ok());
  QuantParams wp;
  for (int c = 0; c < 6; ++c) {
    wp.scale.push_back(0.0071f * (c + 1));
    wp.zero_point.push_back(0);
  }
  wp.axis = 1;
  const QuantParams xp = PerTensor(x_zero == 0 ? 0.0081f : 0.0041f, x_zero);
  auto add = [&](Node n) { EXPECT_TRUE(g.AddNode(std::move(n)).ok()); };
  add(QdqNode("QuantizeLinear", "q_x", "x", "xq", xp));
  add(QdqNode("DequantizeLinear", "dq_x", "xq", "xd", xp));
  add(QdqNode("DequantizeLinear", "dq_w", "wq", "wd", wp));
  add(Node{"mm", "MatMul", {"xd", "wd"}, {"y"}, {}});
  g.outputs = {"y"};
  EXPECT_TRUE(InferShapes(&g).ok());
  Tensor w({8, 6});
  for (int64_t i = 0; i < w.size(); ++i)
    w.data[i] = static_cast<float>((i * 53) % 255 - 127);
  m.weights["wq"] = w;
  return m;
}

// `m` with an Identity between each Conv, Gemm or MatMul and the DQs it
// reads: no backend then takes the layer as quantized, and it runs in f32
// on the dequantized values, ONNX's definition of the QDQ graph.
inline Model WithF32Layers(Model m) {
  Graph& g = m.graph;
  std::vector<Node> added;
  for (Node& n : g.nodes) {
    if (n.op != "Conv" && n.op != "Gemm" && n.op != "MatMul") continue;
    for (size_t k = 0; k < 2 && k < n.inputs.size(); ++k) {
      const int p = g.ProducerIndex(n.inputs[k]);
      if (p < 0 || g.nodes[p].op != "DequantizeLinear") continue;
      Node id;
      id.op = "Identity";
      id.name = n.name + "_f32_in" + std::to_string(k);
      id.inputs = {n.inputs[k]};
      id.outputs = {id.name};
      n.inputs[k] = id.name;
      added.push_back(id);
    }
  }
  for (Node& id : added) EXPECT_TRUE(g.AddNode(id).ok());
  EXPECT_TRUE(g.TopoSort().ok());
  EXPECT_TRUE(InferShapes(&g).ok());
  return m;
}

// Runs `m` on `backend` over `xs` (single-input models); first outputs.
inline std::vector<Tensor> RunOn(const Model& m, Backend backend,
                                 const std::vector<Tensor>& xs,
                                 ExecutorStats* stats = nullptr,
                                 Int8Path int8_path = Int8Path::kAuto) {
  ExecutorOptions o;
  o.backend = backend;
  o.int8_path = int8_path;
  auto ex = Executor::Create(m.graph, m.weights, o);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return {};
  if (stats) *stats = (*ex)->stats();
  std::vector<Tensor> out;
  for (const Tensor& x : xs) {
    std::vector<Tensor> y;
    Status s = (*ex)->Run({x}, &y);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return {};
    out.push_back(y[0]);
  }
  return out;
}

// The oneDNN int8 paths that are exact on this CPU (engine/int8_path.h):
// f32 sums everywhere, the int8 primitives where they sum exactly. The
// tests run each, so a CPU of either kind checks both that it can.
inline std::vector<Int8Path> ExactInt8Paths() {
  std::vector<Int8Path> paths = {Int8Path::kF32Sums};
  if (Int8PathOnThisCpu() == Int8Path::kInt8Primitives)
    paths.push_back(Int8Path::kInt8Primitives);
  return paths;
}

// Equal to `tol` of each sample's largest output magnitude.
inline void ExpectSameOutputs(const std::vector<Tensor>& got,
                              const std::vector<Tensor>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t s = 0; s < got.size(); ++s) {
    ASSERT_EQ(got[s].shape, want[s].shape);
    float scale = 0;
    for (float v : want[s].data) scale = std::max(scale, std::fabs(v));
    for (int64_t i = 0; i < got[s].size(); ++i)
      EXPECT_NEAR(got[s].data[i], want[s].data[i], tol * scale)
          << "sample " << s << " element " << i;
  }
}

}  // namespace int8_test
}  // namespace shoal

#endif  // SHOAL_ENGINE_INT8_TEST_UTIL_H_
