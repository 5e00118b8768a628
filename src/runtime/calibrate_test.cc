// Static quantization end to end on LeNet-5: ranges calibrated by running
// the model, the QDQ model run by both backends, close to f32.
#include "engine/calibrate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "engine/run_whole.h"
#include "models/load_model.h"

namespace shoal {
namespace {

Model LeNet() {
  LoadOptions o;
  o.with_weights = true;
  o.seed = 3;
  return LoadModel("lenet5", o).value();
}

std::vector<Tensor> Images(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<Tensor> out;
  for (int i = 0; i < n; ++i) {
    Tensor t({1, 1, 28, 28});
    for (float& v : t.data) v = u(rng);
    out.push_back(std::move(t));
  }
  return out;
}

TEST(Calibrate, RangesAreWhatTheModelComputes) {
  Model m = LeNet();
  const std::vector<Tensor> xs = Images(5, 1);
  const std::string out = m.graph.outputs[0];
  auto r = CalibrateRanges(m, {m.graph.inputs[0], out}, xs);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  float lo = 1e30f, hi = -1e30f;
  for (const Tensor& x : xs) {
    auto y = RunWhole(m, x);
    ASSERT_TRUE(y.ok());
    for (float v : y->data) lo = std::min(lo, v), hi = std::max(hi, v);
  }
  EXPECT_FLOAT_EQ(r->at(out).lo, lo);
  EXPECT_FLOAT_EQ(r->at(out).hi, hi);
  EXPECT_GE(r->at(m.graph.inputs[0]).lo, 0.f);
  EXPECT_LE(r->at(m.graph.inputs[0]).hi, 1.f);
}

TEST(Calibrate, QuantizedLeNetIsCloseToF32) {
  Model f32 = LeNet();
  Model q = f32;
  auto s = QuantizeStatic(Images(50, 2), &q);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->layers, 5);
  for (const Tensor& x : Images(10, 3)) {
    auto want = RunWhole(f32, x);
    ASSERT_TRUE(want.ok());
    float scale = 0;
    for (float v : want->data) scale = std::max(scale, std::fabs(v));
    for (Backend b : {Backend::kReference, Backend::kOneDnn}) {
      ExecutorOptions o;
      o.backend = b;
      auto got = RunWhole(q, x, o);
      ASSERT_TRUE(got.ok()) << got.status().ToString();
      // Five int8 layers: a few percent of the output's scale.
      for (int64_t i = 0; i < want->size(); ++i)
        EXPECT_NEAR(got->data[i], want->data[i], 0.05f * scale)
            << BackendName(b);
    }
  }
}

TEST(Calibrate, SamplesOfTheWrongShapeAreRefused) {
  Model m = LeNet();
  auto s = QuantizeStatic({Tensor({1, 1, 32, 32})}, &m);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("1x1x28x28"), std::string::npos)
      << s.status().message();
}

}  // namespace
}  // namespace shoal
