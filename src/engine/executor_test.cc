// The engine's differential tests: the oneDNN backend against the reference
// backend on every zoo model, and the engine's error paths.
#include "engine/executor.h"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "graph/cost.h"
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

Tensor RandomInput(const Shape& s, uint64_t seed) {
  Tensor t(s);
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  for (auto& v : t.data) v = d(rng);
  return t;
}

// Max |a - b| relative to the largest |b| (the measure).
double MaxRelDiff(const Tensor& a, const Tensor& b) {
  double max_abs = 0, max_ref = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(double(a.data[i]) - b.data[i]));
    max_ref = std::max(max_ref, std::fabs(double(b.data[i])));
  }
  return max_abs / std::max(max_ref, 1e-30);
}

std::vector<Tensor> RunWith(const Graph& g, const WeightStore& w, Backend backend,
                            const std::vector<Tensor>& in, ExecutorStats* stats = nullptr) {
  ExecutorOptions o;
  o.backend = backend;
  auto ex = Executor::Create(g, w, o);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  if (!ex.ok()) return {};
  std::vector<Tensor> out;
  Status s = (*ex)->Run(in, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (stats) *stats = (*ex)->stats();
  return out;
}

void ExpectBackendsAgree(const Graph& g, uint64_t seed) {
  WeightStore w = RandomWeights(g, seed);
  std::vector<Tensor> in;
  for (const auto& name : g.inputs) in.push_back(RandomInput(g.FindTensor(name)->shape, seed));
  ExecutorStats st;
  auto fast = RunWith(g, w, Backend::kOneDnn, in, &st);
  auto ref = RunWith(g, w, Backend::kReference, in);
  ASSERT_EQ(fast.size(), ref.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    ASSERT_EQ(fast[i].shape, ref[i].shape);
    EXPECT_LE(MaxRelDiff(fast[i], ref[i]), 1e-4) << g.name << " output " << i;
  }
  EXPECT_GT(st.onednn_steps, 0) << g.name;
}

TEST(ExecutorTest, SmallConvNetBackendsAgree) {
  GraphBuilder b("small");
  auto x = b.Input("x", {1, 3, 12, 12});
  auto c = b.Relu(b.Conv("c1", x, 8, 3, 1, 1));
  auto d = b.Conv("c2", c, 8, 3, 2, 1, 8);  // depthwise, strided
  auto e = b.Add(b.Conv("c3", c, 8, 1, 2, 0), d);
  auto p = b.MaxPool(b.Relu(e), {2}, {2}, {0}, true);
  auto f = b.Linear("fc", b.Flatten(p), 5);
  auto g = b.Finish({b.Softmax(f)});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ExpectBackendsAgree(*g, 3);
}

class ZooBackendsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooBackendsTest, OneDnnMatchesReference) {
  const ZooEntry* e = Zoo::Global().Find(GetParam());
  ASSERT_NE(e, nullptr);
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  ExpectBackendsAgree(*g, 11);
}

std::vector<std::string> ZooNames() {
  std::vector<std::string> out;
  for (const auto& e : Zoo::Global().entries()) out.push_back(e.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Slow, ZooBackendsTest, ::testing::ValuesIn(ZooNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

TEST(ExecutorTest, ArenaFollowsPredictedPeak) {
  const ZooEntry* e = Zoo::Global().Find("resnet18");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto cost = ComputeGraphCost(*g);
  ASSERT_TRUE(cost.ok());
  ExecutorOptions o;
  o.backend = Backend::kReference;
  auto ex = Executor::Create(*g, RandomWeights(*g, 1), o);
  ASSERT_TRUE(ex.ok());
  // The reference backend keeps every tensor plain, one buffer per node
  // output, so its live peak is exactly what the cost model predicts.
  EXPECT_EQ((*ex)->stats().peak_live_bytes, cost->peak_activation_bytes);
  EXPECT_GE((*ex)->stats().arena_bytes, cost->peak_activation_bytes);
}

TEST(ExecutorTest, WrongInputShapeIsAnError) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto ex = Executor::Create(*g, RandomWeights(*g, 1), {});
  ASSERT_TRUE(ex.ok());
  std::vector<Tensor> out;
  Status s = (*ex)->Run({Tensor({1, 1, 32, 32})}, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("1x1x28x28"), std::string::npos) << s.message();
}

TEST(ExecutorTest, MissingWeightsAreAnError) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  auto ex = Executor::Create(*g, WeightStore{}, {});
  ASSERT_FALSE(ex.ok());
  EXPECT_NE(ex.status().message().find("conv1"), std::string::npos);
}

}  // namespace
}  // namespace shoal
