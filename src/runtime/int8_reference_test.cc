// The reference backend runs quantized layers on integers
// (engine/int8_reference_step.h): the same outputs as the f32 evaluation of
// the QDQ graph, without running the DQs it absorbs, and it refuses int8
// operands that are not integers.
#include <gtest/gtest.h>

#include "runtime/int8_test_util.h"

namespace shoal {
namespace {

using namespace int8_test;  // NOLINT

// Per layer the two paths differ by f32 rounding (< 2^-22 of the sum of
// |products|, int8_kernels_test.cc), which only a Q landing within that of
// a rounding tie could amplify into a quantization step. Scales chosen so
// that an exact tie is rare (0.01 * 0.02 / 0.02 would put every hundredth
// sum on one) and these samples meet none: 1e-5 of the output's scale.
constexpr float kTol = 1e-5f;

TEST(Int8Reference, LeNetEqualsTheF32QdqEvaluation) {
  const Model q = QuantizedLeNet();
  const Model f = WithF32Layers(q);
  const auto xs = UniformInputs({1, 1, 28, 28}, 8, 0.f, 1.f, 4);
  ExecutorStats int8_stats, f32_stats;
  const auto int8 = RunOn(q, Backend::kReference, xs, &int8_stats);
  const auto f32 = RunOn(f, Backend::kReference, xs, &f32_stats);
  ExpectSameOutputs(int8, f32, kTol);
  // Five layers, each with a DQ of its input and of its weight that the
  // int8 steps absorb; the f32 graph also runs two Identities per layer.
  EXPECT_EQ(f32_stats.steps - int8_stats.steps, 2 * 5 + 2 * 5);
}

TEST(Int8Reference, QuantizedInputFragmentEqualsTheF32Evaluation) {
  for (int32_t zero : {0, -128, 7}) {
    SCOPED_TRACE("zero point " + std::to_string(zero));
    const Model q = QuantizedInputFragment(zero);
    const auto xs = Int8Inputs({1, 4, 8, 8}, 4, 6);
    ExecutorStats st;
    const auto int8 = RunOn(q, Backend::kReference, xs, &st);
    EXPECT_EQ(st.steps, 2);  // the int8 conv and the ReLU
    ExpectSameOutputs(int8, RunOn(WithF32Layers(q), Backend::kReference, xs),
                      kTol);
  }
}

TEST(Int8Reference, DequantizedValuesReadElsewhereAreStillComputed) {
  const Model q = QuantizedInputFragment(-128, /*dq_is_output=*/true);
  ExecutorOptions o;
  o.backend = Backend::kReference;
  auto ex = Executor::Create(q.graph, q.weights, o);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  EXPECT_EQ((*ex)->stats().steps, 3);  // dq_x runs for the graph output
  const Tensor x = Int8Inputs({1, 4, 8, 8}, 1, 8)[0];
  std::vector<Tensor> y;
  ASSERT_TRUE((*ex)->Run({x}, &y).ok());
  ASSERT_EQ(y.size(), 2u);
  for (int64_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(y[1].data[i], (x.data[i] + 128) * 0.05f) << i;
}

TEST(Int8Reference, AValueThatIsNotInt8IsAnErrorNamingTheLayer) {
  const Model q = QuantizedInputFragment(0);
  ExecutorOptions o;
  o.backend = Backend::kReference;
  auto ex = Executor::Create(q.graph, q.weights, o);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  Tensor x = Int8Inputs({1, 4, 8, 8}, 1, 9)[0];
  x.data[5] = 0.5f;
  std::vector<Tensor> y;
  const Status s = (*ex)->Run({x}, &y);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.ToString().find("'conv'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.ToString().find("element 5 is 0.5"), std::string::npos)
      << s.ToString();
}

// x [2, 4, 8] -> Q -> DQ -> MatMul(DQ(int8 w [8, 5], per column, with zero
// points)) -> MatMul(DQ(Q(.)), DQ(Q(.)) transposed): a weight and two
// activations, every operand int8.
Model QuantizedMatMuls() {
  Model m;
  Graph& g = m.graph;
  g.name = "matmuls";
  EXPECT_TRUE(g.AddInput("x", {2, 4, 8}).ok());
  EXPECT_TRUE(g.AddWeight("wq", {8, 5}).ok());
  QuantParams wp;
  for (int c = 0; c < 5; ++c) {
    wp.scale.push_back(0.0217f + 0.0113f * c);
    wp.zero_point.push_back(c - 2);
  }
  wp.axis = 1;
  auto add = [&](Node n) { EXPECT_TRUE(g.AddNode(std::move(n)).ok()); };
  add(QdqNode("QuantizeLinear", "q_x", "x", "xq", PerTensor(0.0107f, 3)));
  add(QdqNode("DequantizeLinear", "dq_x", "xq", "xd", PerTensor(0.0107f, 3)));
  add(QdqNode("DequantizeLinear", "dq_w", "wq", "wd", wp));
  add(Node{"mm1", "MatMul", {"xd", "wd"}, {"h"}, {}});
  add(QdqNode("QuantizeLinear", "q_h", "h", "hq", PerTensor(0.0213f, -5)));
  add(QdqNode("DequantizeLinear", "dq_h", "hq", "hd", PerTensor(0.0213f, -5)));
  Node t{"t", "Transpose", {"h"}, {"ht"}, {}};
  t.attrs.Set("perm", std::vector<int64_t>{0, 2, 1});
  add(t);
  add(QdqNode("QuantizeLinear", "q_t", "ht", "tq", PerTensor(0.0311f, 0)));
  add(QdqNode("DequantizeLinear", "dq_t", "tq", "td", PerTensor(0.0311f, 0)));
  add(Node{"mm2", "MatMul", {"hd", "td"}, {"y"}, {}});
  g.outputs = {"y"};
  EXPECT_TRUE(InferShapes(&g).ok());
  Tensor w({8, 5});
  for (int64_t i = 0; i < w.size(); ++i)
    w.data[i] = static_cast<float>((i * 37) % 255 - 127);
  m.weights["wq"] = w;
  return m;
}

TEST(Int8Reference, MatMulsOfWeightsAndActivationsRunOnIntegers) {
  const Model q = QuantizedMatMuls();
  const auto xs = UniformInputs({2, 4, 8}, 4, -1.f, 1.f, 10);
  ExecutorStats int8_stats, f32_stats;
  const auto int8 = RunOn(q, Backend::kReference, xs, &int8_stats);
  const auto f32 = RunOn(WithF32Layers(q), Backend::kReference, xs, &f32_stats);
  ExpectSameOutputs(int8, f32, kTol);
  // The four DQs are absorbed; the f32 graph adds four Identities.
  EXPECT_EQ(f32_stats.steps - int8_stats.steps, 4 + 4);
}

}  // namespace
}  // namespace shoal
