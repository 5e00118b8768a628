// Executors that share reordered weights: one copy per data and layout,
// the same outputs as executors with copies of their own, and never a
// copy shared between different data that happen to share a name.
#include "engine/shared_weights.h"

#include <gtest/gtest.h>

#include "engine/executor.h"
#include "engine/shared_arena.h"
#include "graph/tensor_diff.h"
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// A strip of a conv layer `rows` rows high and the fc after a pool: the
// shape of the tasks a spatial plan gives one device.
Graph ConvStrip(int64_t rows, bool batchnorm) {
  GraphBuilder b("strip");
  auto x = b.Input("x", {1, 8, rows, 10});
  auto c = b.Conv("c1", x, 16, 3, 1, 1);
  if (batchnorm) c = b.BatchNorm("bn1", c);
  auto y = b.Linear("fc", b.Flatten(b.GlobalAvgPool(b.Relu(c))), 4);
  auto g = b.Finish({y});
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

Tensor Input(const Graph& g, float scale) {
  Tensor t(g.FindTensor(g.inputs[0])->shape);
  for (int64_t i = 0; i < t.size(); ++i)
    t.data[i] = scale * static_cast<float>((i * 37) % 11 - 5);
  return t;
}

Tensor RunOnce(Executor& ex, const Tensor& in) {
  std::vector<Tensor> out;
  Status s = ex.Run({in}, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out.empty() ? Tensor() : out[0];
}

// Keys as a worker gives them: what each weight's data is.
std::map<std::string, std::string> Keys(const WeightStore& w,
                                        const std::string& tag) {
  std::map<std::string, std::string> keys;
  for (const auto& [name, t] : w) keys[name] = tag + ":" + name;
  return keys;
}

std::unique_ptr<Executor> Make(const Graph& g, const WeightStore& w,
                               std::shared_ptr<SharedWeights> shared = {},
                               std::map<std::string, std::string> keys = {}) {
  ExecutorOptions o;
  o.threads = 1;
  o.shared_weights = std::move(shared);
  o.weight_keys = std::move(keys);
  auto ex = Executor::Create(g, w, o);
  EXPECT_TRUE(ex.ok()) << ex.status().ToString();
  return ex.ok() ? std::move(ex).value() : nullptr;
}

// Two tasks on the same weights, keyed alike, as a worker builds them.
struct TwoTasks {
  std::shared_ptr<SharedWeights> shared = std::make_shared<SharedWeights>();
  std::unique_ptr<Executor> first, second;
  TwoTasks(const Graph& a, const Graph& b, const WeightStore& w)
      : first(Make(a, w, shared, Keys(w, "blob"))),
        second(Make(b, w, shared, Keys(w, "blob"))) {}
};

TEST(SharedWeights, TasksOfOneLayerHoldItsWeightsOnce) {
  const Graph edge = ConvStrip(7, false);
  const WeightStore w = RandomWeights(edge, 3);
  TwoTasks t(edge, edge, w);
  auto& [shared, first, second] = t;
  ASSERT_TRUE(first && second);
  // conv weight and bias, fc weight and bias: made once, by the first.
  EXPECT_EQ(shared->copies(), 4);
  EXPECT_EQ(shared->bytes(), first->stats().onednn_weight_bytes);
  EXPECT_GT(first->stats().onednn_weight_bytes, 0);
  EXPECT_EQ(first->stats().shared_weights, 0);
  EXPECT_EQ(second->stats().onednn_weight_bytes, 0);
  EXPECT_EQ(second->stats().shared_weights, 4);

  // The same outputs as an executor with its own copies, also once the
  // executor that made the copies is gone.
  auto alone = Make(edge, w);
  const Tensor in = Input(edge, 0.25f);
  const Tensor want = RunOnce(*alone, in);
  EXPECT_EQ(MaxRelDiff(RunOnce(*first, in), want), 0.0);
  first.reset();
  EXPECT_EQ(MaxRelDiff(RunOnce(*second, in), want), 0.0);
}

TEST(SharedWeights, StripsOfOtherHeightsComputeTheirOwnRows) {
  // A strip's interior and its one-row edge: whatever layouts oneDNN picks
  // for the two, each computes what it would alone.
  const Graph interior = ConvStrip(9, false), edge = ConvStrip(3, false);
  const WeightStore w = RandomWeights(interior, 5);
  TwoTasks t(interior, edge, w);
  auto& [shared, a, b] = t;
  ASSERT_TRUE(a && b);
  EXPECT_EQ(MaxRelDiff(RunOnce(*a, Input(interior, 0.5f)),
                       RunOnce(*Make(interior, w), Input(interior, 0.5f))),
            0.0);
  EXPECT_EQ(MaxRelDiff(RunOnce(*b, Input(edge, 0.5f)),
                       RunOnce(*Make(edge, w), Input(edge, 0.5f))),
            0.0);
  EXPECT_EQ(
      a->stats().shared_weights + b->stats().shared_weights + shared->copies(),
      8);
}

TEST(SharedWeights, OnlyWeightsWithTheSameKeyAreShared) {
  const Graph g = ConvStrip(5, false);
  const WeightStore w1 = RandomWeights(g, 1), w2 = RandomWeights(g, 2);
  auto shared = std::make_shared<SharedWeights>();
  auto a = Make(g, w1, shared, Keys(w1, "one"));
  auto b = Make(g, w2, shared, Keys(w2, "two"));
  auto c = Make(g, w2, shared);  // no keys: copies of its own
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(shared->copies(), 8);
  EXPECT_EQ(b->stats().shared_weights + c->stats().shared_weights, 0);
  const Tensor in = Input(g, 1.0f);
  EXPECT_EQ(MaxRelDiff(RunOnce(*b, in), RunOnce(*Make(g, w2), in)), 0.0);
  EXPECT_GT(MaxRelDiff(RunOnce(*a, in), RunOnce(*b, in)), 0.0);
}

TEST(SharedWeights, AFoldedBatchNormKeysTheConvWeightsItChanged) {
  // The BN folds into the conv's weights in place, under the conv's names:
  // two tasks with the same conv weights but other BN statistics must not
  // share the folded copy; the same conv and BN must.
  const Graph g = ConvStrip(5, true);
  const WeightStore w1 = RandomWeights(g, 1);
  WeightStore w2 = w1;
  for (auto& [name, t] : w2)
    if (name.find("bn1") != std::string::npos)
      for (float& v : t.data) v = v * 0.5f + 0.25f;
  auto keys2 = Keys(w1, "blob");
  for (auto& [name, key] : keys2)
    if (name.find("bn1") != std::string::npos) key += ":other";
  auto shared = std::make_shared<SharedWeights>();
  auto a = Make(g, w1, shared, Keys(w1, "blob"));
  auto b = Make(g, w2, shared, keys2);
  auto c = Make(g, w1, shared, Keys(w1, "blob"));
  ASSERT_TRUE(a && b && c);
  EXPECT_EQ(a->stats().folded_batchnorms, 1);
  // The fc's weight and bias are the same in all three.
  EXPECT_EQ(b->stats().shared_weights, 2);
  EXPECT_EQ(c->stats().shared_weights, 4);
  const Tensor in = Input(g, 0.5f);
  EXPECT_EQ(MaxRelDiff(RunOnce(*b, in), RunOnce(*Make(g, w2), in)), 0.0);
  EXPECT_EQ(MaxRelDiff(RunOnce(*c, in), RunOnce(*Make(g, w1), in)), 0.0);
  EXPECT_GT(MaxRelDiff(RunOnce(*a, in), RunOnce(*b, in)), 0.0);
}

TEST(SharedArena, ExecutorsThatTakeTurnsUseTheLargestArenaOfThem) {
  // A small task built first, a larger one after (the arena grows and the
  // first binds again), then turns in any order: each computes what it
  // computes alone, and the arena is the larger one's, not their sum.
  const Graph small = ConvStrip(3, false), large = ConvStrip(11, true);
  const WeightStore ws = RandomWeights(small, 7), wl = RandomWeights(large, 8);
  auto arena = std::make_shared<SharedArena>();
  ExecutorOptions o;
  o.threads = 1;
  o.shared_arena = arena;
  auto a = Executor::Create(small, ws, o);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  const Tensor in_s = Input(small, 0.5f), in_l = Input(large, 0.25f);
  const Tensor want_s = RunOnce(*Make(small, ws), in_s);
  EXPECT_EQ(MaxRelDiff(RunOnce(**a, in_s), want_s), 0.0);
  const int64_t generation = arena->generation();
  auto b = Executor::Create(large, wl, o);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_GT(arena->generation(), generation);
  EXPECT_EQ(arena->arena_bytes(),
            std::max((*a)->stats().arena_bytes, (*b)->stats().arena_bytes));
  const Tensor want_l = RunOnce(*Make(large, wl), in_l);
  for (int turn = 0; turn < 2; ++turn) {
    EXPECT_EQ(MaxRelDiff(RunOnce(**a, in_s), want_s), 0.0);
    EXPECT_EQ(MaxRelDiff(RunOnce(**b, in_l), want_l), 0.0);
  }
}

}  // namespace
}  // namespace shoal
