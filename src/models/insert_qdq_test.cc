// InsertQdq on LeNet-5: every conv and gemm reads int8 weights through a
// per-channel DequantizeLinear and its input through one Q -> DQ pair; the
// parameters follow from the ranges given; a missing range is refused.
#include "graph/insert_qdq.h"

#include <gtest/gtest.h>

#include <cmath>

#include "models/load_model.h"

namespace shoal {
namespace {

Model LeNet() {
  LoadOptions o;
  o.with_weights = true;
  o.seed = 3;
  return LoadModel("lenet5", o).value();
}

std::map<std::string, ValueRange> RangesOf(const Model& m, float lo, float hi) {
  std::map<std::string, ValueRange> r;
  for (const auto& t : QdqActivations(m)) r[t] = ValueRange{lo, hi, true};
  return r;
}

TEST(InsertQdq, QuantizesEveryWeightedLayer) {
  Model m = LeNet();
  const Model f32 = m;
  const std::vector<std::string> acts = QdqActivations(m);
  ASSERT_FALSE(acts.empty());
  EXPECT_EQ(acts[0], m.graph.inputs[0]);
  auto s = InsertQdq(RangesOf(m, 0.f, 2.f), &m);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  int layers = 0;
  for (const Node& n : m.graph.nodes) {
    if (n.op != "Conv" && n.op != "Gemm") continue;
    ++layers;
    for (int k : {0, 1}) {
      const int p = m.graph.ProducerIndex(n.inputs[k]);
      ASSERT_GE(p, 0) << n.name << " input " << k;
      const Node& dq = m.graph.nodes[p];
      EXPECT_EQ(dq.op, "DequantizeLinear") << n.name;
      if (k == 0) {
        const int q = m.graph.ProducerIndex(dq.inputs[0]);
        ASSERT_GE(q, 0);
        EXPECT_EQ(m.graph.nodes[q].op, "QuantizeLinear");
        // [0, 2] is never negative: 256 levels from zero point -128.
        EXPECT_EQ(dq.attrs.GetInts("zero_point"), (std::vector<int64_t>{-128}));
        EXPECT_FLOAT_EQ(dq.attrs.GetFloats("scale")[0], 2.f / 255);
        continue;
      }
      // Per output channel, symmetric: the largest |w| of each maps to 127.
      const std::string& w = dq.inputs[0];
      const Tensor& q = m.weights.at(w);
      const Tensor& orig = f32.weights.at(w);
      const std::vector<float> scale = dq.attrs.GetFloats("scale");
      const int64_t axis = n.op == "Conv" || n.attrs.GetInt("transB") ? 0 : 1;
      EXPECT_EQ(dq.attrs.GetInt("axis", -9), axis) << n.name;
      ASSERT_EQ(static_cast<int64_t>(scale.size()), q.shape[axis]);
      float qmax = 0;
      for (int64_t i = 0; i < q.size(); ++i) {
        EXPECT_EQ(q.data[i], std::nearbyint(q.data[i]));
        qmax = std::max(qmax, std::fabs(q.data[i]));
      }
      EXPECT_EQ(qmax, 127.f) << n.name;
      // Dequantized, each weight is within half a step of the original.
      const int64_t inner =
          q.size() / q.shape[0] / (axis == 0 ? 1 : q.shape[1]);
      for (int64_t i = 0; i < q.size(); ++i) {
        const int64_t c = axis == 0 ? i / inner : i % q.shape[1];
        EXPECT_LE(std::fabs(q.data[i] * scale[c] - orig.data[i]),
                  scale[c] * 0.5001f);
      }
    }
  }
  EXPECT_EQ(layers, s->layers);
  EXPECT_EQ(s->activations, static_cast<int>(acts.size()));
}

TEST(InsertQdq, SignedRangesAreSymmetric) {
  QuantParams p = ActivationQuantParams(ValueRange{-3.f, 1.f, true});
  EXPECT_EQ(p.zero_point, (std::vector<int32_t>{0}));
  EXPECT_FLOAT_EQ(p.scale[0], 3.f / 127);
  QuantParams zero = ActivationQuantParams(ValueRange{0.f, 0.f, true});
  EXPECT_EQ(zero.scale, (std::vector<float>{1.f}));
}

TEST(InsertQdq, MissingRangeNamesTheTensor) {
  Model m = LeNet();
  auto ranges = RangesOf(m, 0.f, 1.f);
  const std::string last = QdqActivations(m).back();
  ranges.erase(last);
  auto s = InsertQdq(ranges, &m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("'" + last + "'"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace shoal
