// Quantized (QDQ) models on oneDNN's int8 primitives against the reference
// int8 kernels (the oracle, int32-exact sums): s8 and u8 inputs, per-tensor
// and per-channel weights, grouped convs, Gemm in both weight layouts; a
// layer whose quantized input someone else reads stays on the reference; a
// graph fragment whose input arrives quantized runs on int8 too. Each on
// every path that is exact on this CPU (int8_path.h): the int8 primitives
// where they sum exactly, f32 sums of the integers everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/calibrate.h"
#include "engine/executor.h"
#include "lcp/split_branches.h"
#include "models/builder.h"
#include "models/zoo.h"
#include "runtime/int8_test_util.h"

namespace shoal {
namespace {

std::vector<Tensor> Inputs(const Shape& s, int n, float lo, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, 1.f);
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    Tensor t(s);
    for (float& v : t.data) v = u(rng);
    out.push_back(std::move(t));
  }
  return out;
}

// A small net with signed input (s8 data), a grouped conv, and a Gemm whose
// weight is [K, N] (transB 0), quantized on `n` samples.
Model SmallNet() {
  GraphBuilder b("small");
  auto x = b.Input("x", {1, 4, 10, 10});
  auto c = b.Relu(b.Conv("c1", x, 8, 3, 1, 1));
  auto d = b.Relu(b.Conv("c2", c, 8, 3, 2, 1, 2));
  auto f = b.Linear("fc", b.Flatten(b.MaxPool(d, {2}, {2}, {0}, false)), 6);
  Model m;
  m.graph = b.Finish({f}).value();
  m.weights = RandomWeights(m.graph, 4);
  // fc's weight as [K, N], as a MatMul by a constant imports.
  for (Node& n : m.graph.nodes) {
    if (n.op != "Gemm") continue;
    n.attrs.Set("transB", int64_t{0});
    Tensor& w = m.weights.at(n.inputs[1]);
    Tensor t({w.shape[1], w.shape[0]});
    for (int64_t i = 0; i < w.shape[0]; ++i)
      for (int64_t j = 0; j < w.shape[1]; ++j)
        t.data[j * w.shape[0] + i] = w.data[i * w.shape[1] + j];
    w = t;
    m.graph.FindTensor(n.inputs[1])->shape = t.shape;
  }
  return m;
}

struct Runs {
  std::vector<Tensor> onednn, reference;
  ExecutorStats stats;
};

Runs RunBoth(const Model& m, const std::vector<Tensor>& xs, Int8Path path) {
  Runs r;
  for (Backend backend : {Backend::kOneDnn, Backend::kReference}) {
    ExecutorOptions o;
    o.backend = backend;
    o.int8_path = path;
    auto ex = Executor::Create(m.graph, m.weights, o);
    EXPECT_TRUE(ex.ok()) << ex.status().ToString();
    if (!ex.ok()) return r;
    if (backend == Backend::kOneDnn) r.stats = (*ex)->stats();
    for (const Tensor& x : xs) {
      std::vector<Tensor> y;
      EXPECT_TRUE((*ex)->Run({x}, &y).ok());
      (backend == Backend::kOneDnn ? r.onednn : r.reference).push_back(y[0]);
    }
  }
  return r;
}

// oneDNN quantizes by multiplying with 1 / scale where ONNX divides; the
// two round apart only on a tie, which moves one value by one step. The
// outputs here agree to float rounding on every sample.
void ExpectAgree(const Runs& r) {
  ASSERT_EQ(r.onednn.size(), r.reference.size());
  for (size_t s = 0; s < r.onednn.size(); ++s) {
    float scale = 0;
    for (float v : r.reference[s].data) scale = std::max(scale, std::fabs(v));
    for (int64_t i = 0; i < r.onednn[s].size(); ++i)
      EXPECT_NEAR(r.onednn[s].data[i], r.reference[s].data[i], 1e-5f * scale)
          << "sample " << s << " element " << i;
  }
}

std::string PathName(Int8Path p) {
  return std::string("int8 path: ") + Int8PathName(p);
}

TEST(Int8OneDnn, SignedInputGroupedConvAndGemmMatchTheReference) {
  Model m = SmallNet();
  auto s = QuantizeStatic(Inputs({1, 4, 10, 10}, 20, -1.f, 1), &m);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->layers, 3);
  for (Int8Path path : int8_test::ExactInt8Paths()) {
    SCOPED_TRACE(PathName(path));
    const Runs r = RunBoth(m, Inputs({1, 4, 10, 10}, 8, -1.f, 2), path);
    EXPECT_EQ(r.stats.reference_steps, 0);
    EXPECT_EQ(r.stats.int8_layers, 3);
    EXPECT_EQ(r.stats.int8_path, path);
    ExpectAgree(r);
  }
}

// Large sums of full-range products, where oneDNN's int8 kernels without
// VNNI saturate (a pair of products past 32767): u8 inputs near 255 and
// weights near -128 on a 3x3x64 conv and a 4096-wide Gemm. kAuto, the
// path a user gets, is exact on whatever CPU runs the test.
TEST(Int8OneDnn, FullRangeProductsAreExactOnThisCpusPath) {
  GraphBuilder gb("wide");
  auto x = gb.Input("x", {1, 64, 6, 6});
  auto c = gb.Conv("c", x, 16, 3, 1, 1);
  auto f = gb.Linear("fc", gb.Flatten(c), 8);
  Model m;
  m.graph = gb.Finish({f}).value();
  m.weights = RandomWeights(m.graph, 6);
  // Weights of one sign in each output channel: the products of a u8 input
  // add up instead of cancelling.
  for (auto& [name, w] : m.weights)
    if (w.shape.size() > 1)
      for (float& v : w.data) v = -std::fabs(v) - 0.05f;
  ASSERT_TRUE(QuantizeStatic(Inputs({1, 64, 6, 6}, 8, 0.9f, 5), &m).ok());
  const auto xs = Inputs({1, 64, 6, 6}, 4, 0.95f, 7);
  ExecutorStats st;
  const auto got = int8_test::RunOn(m, Backend::kOneDnn, xs, &st);
  EXPECT_EQ(st.int8_layers, 2);
  EXPECT_EQ(st.int8_path, Int8PathOnThisCpu()) << Int8PathReason();
  int8_test::ExpectSameOutputs(
      got, int8_test::RunOn(m, Backend::kReference, xs), 1e-5f);
}

TEST(Int8OneDnn, LeNetRunsOnInt8WithAQuarterOfTheWeightBytes) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  Model f32;
  f32.graph = e->build(e->input_shape).value();
  f32.weights = RandomWeights(f32.graph, 2);
  Model q = f32;
  ASSERT_TRUE(QuantizeStatic(Inputs({1, 1, 28, 28}, 20, 0.f, 3), &q).ok());
  auto ex = Executor::Create(f32.graph, f32.weights, ExecutorOptions{});
  ASSERT_TRUE(ex.ok());
  for (Int8Path path : int8_test::ExactInt8Paths()) {
    SCOPED_TRACE(PathName(path));
    const Runs r = RunBoth(q, Inputs({1, 1, 28, 28}, 8, 0.f, 4), path);
    EXPECT_EQ(r.stats.reference_steps, 0);
    EXPECT_EQ(r.stats.retained_weight_bytes, 0);
    ExpectAgree(r);
    const double ratio = static_cast<double>(r.stats.onednn_weight_bytes) /
                         (*ex)->stats().onednn_weight_bytes;
    if (path == Int8Path::kInt8Primitives) {
      // s8 weights; the f32 biases (a few hundred values) stay.
      EXPECT_LT(ratio, 0.27) << r.stats.onednn_weight_bytes;
      EXPECT_GT(ratio, 0.24);
    } else {
      // The weights' integers as f32 (in the layouts the f32 layers
      // chose), and one scale per output channel.
      EXPECT_GT(ratio, 0.9) << r.stats.onednn_weight_bytes;
      EXPECT_LT(ratio, 1.05);
    }
  }
}

// LCP branches: every branch's first conv reads the one quantized input.
// Each is an int8 layer, also after the first one built has taken its
// weights (which once sent the others to an f32 path whose weights the
// int8 pattern had already taken).
TEST(Int8OneDnn, LayersSharingAQuantizedInputAllRunOnInt8) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  BranchOptions bo;
  bo.branches = 4;
  Model q;
  q.graph = SplitIntoBranches(e->build(e->input_shape).value(), bo).value();
  q.weights = RandomWeights(q.graph, 5);
  ASSERT_TRUE(QuantizeStatic(Inputs({1, 1, 28, 28}, 20, 0.f, 3), &q).ok());
  for (Int8Path path : int8_test::ExactInt8Paths()) {
    SCOPED_TRACE(PathName(path));
    const Runs r = RunBoth(q, Inputs({1, 1, 28, 28}, 4, 0.f, 4), path);
    EXPECT_EQ(r.stats.reference_steps, 0);
    ExpectAgree(r);
  }
}

TEST(Int8OneDnn, QuantizedValuesReadElsewhereStayOnTheReference) {
  Model m = SmallNet();
  ASSERT_TRUE(QuantizeStatic(Inputs({1, 4, 10, 10}, 20, -1.f, 1), &m).ok());
  // The dequantized input of c1 becomes a graph output too: its Q and DQ
  // and c1 run on the reference, the rest still on int8.
  std::string dq;
  for (const Node& n : m.graph.nodes)
    if (n.name == "c1") dq = n.inputs[0];
  ASSERT_FALSE(dq.empty());
  m.graph.outputs.push_back(dq);
  for (Int8Path path : int8_test::ExactInt8Paths()) {
    SCOPED_TRACE(PathName(path));
    const Runs r = RunBoth(m, Inputs({1, 4, 10, 10}, 4, -1.f, 2), path);
    EXPECT_GE(r.stats.reference_steps, 3);
    EXPECT_GT(r.stats.onednn_steps, 3);
    ExpectAgree(r);
  }
}

// A plan cut at a Q's output leaves the receiving device a fragment whose
// input holds int8 values read by DQ -> Conv(DQ(w)): a plain reorder (u8:
// plus 128) feeds the int8 convolution, and no step is left to the
// reference (with f32 sums, a second reorder makes the s8 / u8 data f32).
TEST(Int8OneDnn, AFragmentWhoseInputArrivesQuantizedRunsOnInt8) {
  for (Int8Path path : int8_test::ExactInt8Paths()) {
    for (int32_t zero : {0, -128}) {
      SCOPED_TRACE(PathName(path) + ", zero point " + std::to_string(zero));
      const Model m = int8_test::QuantizedInputFragment(zero);
      const auto xs = int8_test::Int8Inputs({1, 4, 8, 8}, 4, 12);
      ExecutorOptions o;
      o.int8_path = path;
      auto ex = Executor::Create(m.graph, m.weights, o);
      ASSERT_TRUE(ex.ok()) << ex.status().ToString();
      const ExecutorStats& st = (*ex)->stats();
      EXPECT_EQ(st.reference_steps, 0);
      // The reorder, the conv (ReLU fused) and the output's reorder to
      // plain: no DQ runs, so the conv reads the s8 / u8 data and its
      // weights' integers (an f32 conv on the DQs' outputs would need
      // them, and oneDNN takes no conv of non-constant weights).
      std::vector<std::string> want_steps = {
          std::string("reorder xq to ") + (zero == 0 ? "s8" : "u8"),
          "conv+Relu", "reorder y"};
      if (path == Int8Path::kF32Sums)
        want_steps.insert(want_steps.begin() + 1, "reorder xq:int8");
      EXPECT_EQ((*ex)->step_labels(), want_steps);
      const auto got = int8_test::RunOn(m, Backend::kOneDnn, xs, nullptr, path);
      const auto want = int8_test::RunOn(m, Backend::kReference, xs);
      int8_test::ExpectSameOutputs(got, want, 1e-5f);
    }
  }
}

// LeNet-5 cut after conv2's Q: conv2 and the three Gemms run on int8, the
// first from the fragment's input through a plain reorder to u8.
TEST(Int8OneDnn, LeNetCutAtAQuantizeRunsOnInt8) {
  const Model m = int8_test::LeNetCutAfterSecondQuantize();
  const Shape s = m.graph.FindTensor(m.graph.inputs[0])->shape;
  const auto xs = int8_test::Int8Inputs(s, 4, 14);
  for (Int8Path path : int8_test::ExactInt8Paths()) {
    SCOPED_TRACE(PathName(path));
    ExecutorStats st;
    const auto got = int8_test::RunOn(m, Backend::kOneDnn, xs, &st, path);
    EXPECT_EQ(st.reference_steps, 0);
    EXPECT_EQ(st.int8_layers, 4);
    int8_test::ExpectSameOutputs(
        got, int8_test::RunOn(m, Backend::kReference, xs), 1e-5f);
  }
}

// A quantized MatMul by a constant weight is an int8 matmul (s8 weights
// broadcast over the batch axes, per-column output scales) on s8 and u8
// inputs, 3-D and 4-D.
TEST(Int8OneDnn, MatMulByAConstantWeightRunsOnInt8) {
  for (const auto& [shape, zero] : std::vector<std::pair<Shape, int32_t>>{
           {{2, 5, 8}, 0}, {{1, 2, 3, 8}, -128}}) {
    SCOPED_TRACE(ShapeToString(shape) + " zero point " + std::to_string(zero));
    const Model m = int8_test::QuantizedMatMulByWeight(shape, zero);
    const auto xs = Inputs(shape, 4, zero == 0 ? -1.f : 0.f, 15);
    for (Int8Path path : int8_test::ExactInt8Paths()) {
      SCOPED_TRACE(PathName(path));
      ExecutorStats st;
      const auto got = int8_test::RunOn(m, Backend::kOneDnn, xs, &st, path);
      EXPECT_EQ(st.reference_steps, 0);
      EXPECT_EQ(st.onednn_steps, 2);  // the Q's reorder and the matmul
      // 48 s8 weights; with f32 sums 192 bytes of f32 ones and the 6
      // columns' scales.
      EXPECT_EQ(st.onednn_weight_bytes,
                path == Int8Path::kInt8Primitives ? 48 : 192 + 6 * 4);
      int8_test::ExpectSameOutputs(
          got, int8_test::RunOn(m, Backend::kReference, xs), 1e-5f);
    }
  }
}

// Any other zero point is not the primitives' (int8_pattern.h): the
// fragment then runs on the reference, still equal.
TEST(Int8OneDnn, AQuantizedInputWithAnotherZeroPointStaysOnTheReference) {
  const Model m = int8_test::QuantizedInputFragment(7);
  const auto xs = int8_test::Int8Inputs({1, 4, 8, 8}, 2, 13);
  ExecutorStats st;
  const auto got = int8_test::RunOn(m, Backend::kOneDnn, xs, &st);
  EXPECT_GT(st.reference_steps, 0);
  int8_test::ExpectSameOutputs(
      got, int8_test::RunOn(m, Backend::kReference, xs), 1e-5f);
}

}  // namespace
}  // namespace shoal
