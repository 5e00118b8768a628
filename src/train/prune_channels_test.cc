// Pruning removes the channels of least weight and what reads them: a model
// whose pruned channels were zero already computes the same outputs after
// pruning, and layers whose channels leave the chain keep their width.
#include "lcp/prune_channels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "engine/run_whole.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "lcp/split_branches.h"
#include "models/load_model.h"

namespace shoal {
namespace {

Model Zoo(const std::string& name) {
  LoadOptions lo;
  lo.with_weights = true;
  lo.seed = 3;
  auto m = LoadModel(name, lo);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

const Node& NodeNamed(const Graph& g, const std::string& name) {
  const Node* n = g.FindNode(name);
  EXPECT_NE(n, nullptr) << name;
  return *n;
}

// Zeroes the first `count` output channels of layer `name` (weights and
// bias), so that they are the least important ones.
void ZeroChannels(Model* m, const std::string& name, int64_t count) {
  const Node& n = NodeNamed(m->graph, name);
  Tensor& w = m->weights.at(n.inputs[1]);
  const bool rows = n.op == "Conv" || n.attrs.GetInt("transB", 0) != 0;
  const int64_t units = rows ? w.shape[0] : w.shape[1];
  for (int64_t i = 0; i < w.size(); ++i) {
    const int64_t unit = rows ? i / (w.size() / units) : i % units;
    if (unit < count) w.data[i] = 0;
  }
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    Tensor& b = m->weights.at(n.inputs[2]);
    for (int64_t u = 0; u < count; ++u) b.data[u] = 0;
  }
}

TEST(PruneChannels, ZeroChannelsPrunedLeaveTheOutputsAsTheyWere) {
  Model m = Zoo("lenet5");
  auto first = PruneChannels(m, {0.25});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_FALSE(first->layers.empty());
  for (const PrunedLayer& l : first->layers) {
    ZeroChannels(&m, l.node, l.before - l.after);
  }
  auto pruned = PruneChannels(m, {0.25});
  ASSERT_TRUE(pruned.ok()) << pruned.status().message();
  // conv1 (6 channels) loses 1, conv2 (16) 4, conv3 (120) 30, fc1 (84) 21;
  // fc2 is the output and keeps its 10.
  std::map<std::string, std::pair<int64_t, int64_t>> got;
  for (const auto& l : pruned->layers) got[l.node] = {l.before, l.after};
  EXPECT_EQ(got["conv1"], std::make_pair(int64_t{6}, int64_t{5}));
  EXPECT_EQ(got["conv2"], std::make_pair(int64_t{16}, int64_t{12}));
  EXPECT_EQ(got["conv3"], std::make_pair(int64_t{120}, int64_t{90}));
  EXPECT_EQ(got["fc1"], std::make_pair(int64_t{84}, int64_t{63}));
  EXPECT_EQ(got.count("fc2"), 0u);
  const Graph& pg = pruned->model.graph;
  EXPECT_EQ(pg.FindTensor(NodeNamed(pg, "conv2").inputs[1])->shape,
            (Shape{12, 5, 5, 5}));
  EXPECT_EQ(pg.FindTensor(NodeNamed(pg, "fc2").inputs[1])->shape[1] *
                pg.FindTensor(NodeNamed(pg, "fc2").inputs[1])->shape[0],
            10 * 63);

  const Shape in = m.graph.FindTensor(m.graph.inputs[0])->shape;
  for (uint64_t seed : {1, 2, 3}) {
    const Tensor x = RandomInput(in, seed);
    auto want = RunWhole(m, x);
    auto have = RunWhole(pruned->model, x);
    ASSERT_TRUE(want.ok() && have.ok());
    EXPECT_LE(MaxRelDiff(*have, *want), 1e-5) << "seed " << seed;
  }
}

TEST(PruneChannels, KeepsTheChannelsOfLargestWeights) {
  Model m = Zoo("lenet5");
  // conv1's channel 3 made the smallest: it is the one removed.
  const Node& conv1 = NodeNamed(m.graph, "conv1");
  Tensor& w = m.weights.at(conv1.inputs[1]);
  for (int64_t i = 3 * 25; i < 4 * 25; ++i) w.data[i] *= 1e-3f;
  auto p = PruneChannels(m, {1.0 / 6});
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Tensor& pw =
      p->model.weights.at(NodeNamed(p->model.graph, "conv1").inputs[1]);
  ASSERT_EQ(pw.shape[0], 5);
  for (int64_t c = 0; c < 5; ++c) {
    const int64_t from = c < 3 ? c : c + 1;
    EXPECT_EQ(pw.data[c * 25], w.data[from * 25]) << "channel " << c;
  }
}

TEST(PruneChannels, EachLcpBranchAloneAndNotWhatTheClassifierReads) {
  Model m = Zoo("lenet5");
  auto split = SplitIntoBranches(m.graph, {2, 0, {}});
  ASSERT_TRUE(split.ok()) << split.status().message();
  Model lcp;
  lcp.graph = *split;
  for (const auto& [name, t] : lcp.graph.tensors) {
    if (t.is_weight()) lcp.weights[name] = Tensor(t.shape);
  }
  // Distinct magnitudes, so that the choice is defined.
  float v = 1;
  for (auto& [name, t] : lcp.weights) {
    for (float& x : t.data) x = (v = v * 1.0001f);
  }
  auto p = PruneChannels(lcp, {0.5});
  ASSERT_TRUE(p.ok()) << p.status().message();
  std::set<std::string> pruned;
  for (const auto& l : p->layers) pruned.insert(l.node);
  EXPECT_EQ(pruned,
            (std::set<std::string>{"b0/conv1", "b0/conv2", "b0/conv3",
                                   "b1/conv1", "b1/conv2", "b1/conv3"}));
  // The branches' last layers still give the classifier 2 x 42 features.
  EXPECT_EQ(p->model.graph.FindTensor(kLcpPrefinal)->shape, (Shape{1, 84}));
}

TEST(PruneChannels, LayersFeedingAResidualAddKeepTheirWidth) {
  Model m = Zoo("resnet18");
  auto p = PruneChannels(m, {0.5});
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_FALSE(p->layers.empty());
  for (const auto& l : p->layers) {
    // In a basic block only the first conv's channels stay inside it.
    EXPECT_NE(l.node.find("conv1"), std::string::npos) << l.node;
  }
  const Shape in = m.graph.FindTensor(m.graph.inputs[0])->shape;
  auto y = RunWhole(p->model, RandomInput(in, 1));
  ASSERT_TRUE(y.ok()) << y.status().message();
  EXPECT_EQ(y->shape, (Shape{1, 1000}));
}

TEST(PruneChannels, RefusesRatiosOutsideZeroToOneAndModelsWithoutWeights) {
  Model m = Zoo("lenet5");
  for (double r : {-0.1, 1.0, 2.0, std::nan("")}) {
    auto p = PruneChannels(m, {r});
    ASSERT_FALSE(p.ok()) << r;
    EXPECT_NE(p.status().message().find("ratio"), std::string::npos);
  }
  Model bare;
  bare.graph = m.graph;
  auto p = PruneChannels(bare, {0.5});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("weights"), std::string::npos);
}

}  // namespace
}  // namespace shoal
