// The heads strategy on a small ViT: exact against the one-device run on
// 2, 3 and 4 devices, equal and unequal, and each device computes its own
// heads' attention.
#include <gtest/gtest.h>

#include <map>

#include "models/builder.h"
#include "partition/plan_test_util.h"
#include "partition/vit_test_model.h"

namespace shoal {
namespace {

using testing::Devices;
using testing::EqualDevices;
using testing::PlanRunResult;
using testing::RunPlanExact;

// Per device, the heads of the scores of block `block` computed there.
std::map<int, int64_t> ScoreHeadsByDevice(const Plan& p,
                                          const std::string& block) {
  std::map<int, int64_t> heads;
  for (const auto& t : p.tasks) {
    for (const auto& n : t.fragment.nodes) {
      if (n.name != block + ".self_attention.scores") continue;
      heads[t.devices[0]] += t.fragment.FindTensor(n.outputs[0])->shape[1];
    }
  }
  return heads;
}

TEST(HeadsStrategy, SmallVitIsExactOn2To4Devices) {
  const Model m = testing::SmallVit();
  for (int n : {2, 3, 4}) {
    PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, "heads", EqualDevices(n), &r)) << n;
    // 6 heads: 3+3, 2+2+2, 2+2+1+1.
    for (const char* block :
         {"encoder.layers.encoder_layer_0", "encoder.layers.encoder_layer_1"}) {
      const auto heads = ScoreHeadsByDevice(r.plan, block);
      ASSERT_EQ(static_cast<int>(heads.size()), n) << block;
      int64_t sum = 0;
      for (const auto& [dev, h] : heads) {
        EXPECT_GE(h, 1) << dev;
        sum += h;
      }
      EXPECT_EQ(sum, 6) << block;
    }
  }
}

// Q, K and V packed in one projection (torchvision's export): each device
// computes its heads' columns of each of the three segments.
TEST(HeadsStrategy, PackedProjectionIsSplitByHeads) {
  VitConfig c = testing::SmallVitConfig();
  c.packed_qkv = true;
  const Model m = testing::SmallVit(c);
  for (const auto& devices :
       {EqualDevices(2), EqualDevices(4), Devices({2.0, 1.0, 1.0})}) {
    PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, "heads", devices, &r)) << devices.size();
    const auto heads =
        ScoreHeadsByDevice(r.plan, "encoder.layers.encoder_layer_1");
    EXPECT_EQ(heads.size(), devices.size());
    int64_t sum = 0;
    for (const auto& [dev, h] : heads) sum += h;
    EXPECT_EQ(sum, 6);
    // Three parts of the packed projection on each device.
    std::map<int, int> parts;
    for (const auto& t : r.plan.tasks) {
      for (const auto& n : t.fragment.nodes) {
        if (n.name == "encoder.layers.encoder_layer_1.self_attention.in_proj")
          ++parts[t.devices[0]];
      }
    }
    EXPECT_EQ(parts.size(), devices.size());
    for (const auto& [dev, k] : parts) EXPECT_EQ(k, 3) << dev;
  }
}

TEST(HeadsStrategy, UnequalDevicesTakeHeadsByShare) {
  const Model m = testing::SmallVit();
  PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "heads", Devices({2.0, 1.0, 1.0}), &r));
  const auto heads =
      ScoreHeadsByDevice(r.plan, "encoder.layers.encoder_layer_0");
  EXPECT_EQ(heads.at(0), 3);
  EXPECT_EQ(heads.at(1) + heads.at(2), 3);
}

// Fewer heads than devices: attention runs on as many devices as it has
// heads, the MLPs on all of them.
TEST(HeadsStrategy, FewerHeadsThanDevices) {
  VitConfig c = testing::SmallVitConfig();
  c.heads = 2;
  c.dim = 16;
  const Model m = testing::SmallVit(c);
  PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "heads", EqualDevices(3), &r));
  EXPECT_EQ(ScoreHeadsByDevice(r.plan, "encoder.layers.encoder_layer_0").size(),
            2u);
}

// Sums of fewer tokens than devices are reduce-scattered by features, so
// LayerNorm, which reads whole tokens, runs whole on every device after an
// all-gather; with more tokens, on each device's own tokens.
TEST(HeadsStrategy, LayerNormOnTokensOrWholeOnEveryDevice) {
  const std::string ln = "encoder.layers.encoder_layer_1.ln_1";
  auto reason = [&](const Plan& p) {
    for (const auto& d : p.decisions) {
      if (d.layer == ln) return d.reason;
    }
    return std::string();
  };
  PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(testing::SmallVit(), "heads", EqualDevices(3), &r));
  EXPECT_NE(reason(r.plan).find("its tokens"), std::string::npos)
      << reason(r.plan);
  // 16x16 images: one patch and the class token, 2 tokens on 3 devices.
  VitConfig c = testing::SmallVitConfig();
  c.patch = 16;
  Model m;
  auto g = BuildVit(c, {1, 3, 16, 16});
  ASSERT_TRUE(g.ok()) << g.status().message();
  m.graph = std::move(g).value();
  m.weights = RandomWeights(m.graph, 5);
  ASSERT_TRUE(RunPlanExact(m, "heads", EqualDevices(3), &r));
  EXPECT_NE(reason(r.plan).find("runs whole on each of the 3 devices"),
            std::string::npos)
      << reason(r.plan);
}

// With overlap_reductions each layer split by its inputs computes its
// partial sums in chunks of tokens, its own tokens last, and each chunk's
// sums go to the devices that reduce them; an MLP's first layer and the
// Q, K and V projections compute a device's own tokens first and the rest
// as they arrive: exact, equal and unequal.
TEST(HeadsStrategy, ReductionsInChunksOfTokensAreExactOwnTokensLast) {
  const Model m = testing::SmallVit();
  for (const auto& devices :
       {EqualDevices(2), EqualDevices(3), Devices({2.0, 1.0, 1.0, 1.0})}) {
    PlanOptions po;
    po.strategy = "heads";
    po.devices = devices;
    po.overlap_reductions = true;
    PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, po, &r)) << devices.size();
    // The out projection of block 0: per device, its chunks in order.
    const std::string out =
        "encoder.layers.encoder_layer_0.self_attention.out_proj";
    std::map<int, std::vector<const Task*>> chunks;
    for (const auto& t : r.plan.tasks) {
      if (t.layer == out) chunks[t.devices[0]].push_back(&t);
    }
    ASSERT_EQ(chunks.size(), devices.size());
    // Each device's chunks hold 17 tokens between them; the first is
    // another device's tokens, whose sums leave before the device's own.
    for (const auto& [dev, ts] : chunks) {
      ASSERT_GE(ts.size(), 2u) << dev;
      int64_t tokens = 0;
      for (const Task* t : ts) {
        tokens +=
            t->fragment.FindTensor(t->fragment.nodes[0].outputs[0])->shape[0];
      }
      EXPECT_EQ(tokens, 17) << dev;
      bool first_leaves = false, last_leaves = false;
      for (const auto& x : r.plan.transfers) {
        if (x.src.task < 0 || x.dst.task < 0) continue;
        const int to = r.plan.tasks[x.dst.task].devices[0];
        if (x.src.task == ts.front()->id && to != dev) first_leaves = true;
        if (x.src.task == ts.back()->id && to != dev) last_leaves = true;
      }
      EXPECT_TRUE(first_leaves) << dev;
      EXPECT_FALSE(last_leaves) << dev << ": its own tokens stay";
    }
    // The MLP's first layer: per device, its own tokens first (nothing
    // from another device), then the rest as the all-gather brings them.
    const std::string up = "encoder.layers.encoder_layer_0.mlp.0";
    std::map<int, std::vector<const Task*>> parts;
    for (const auto& t : r.plan.tasks) {
      if (t.layer == up) parts[t.devices[0]].push_back(&t);
    }
    ASSERT_EQ(parts.size(), devices.size());
    for (const auto& [dev, ts] : parts) {
      EXPECT_GE(ts.size(), 2u) << dev;
      EXPECT_LE(ts.size(), 3u) << dev;
      for (const auto& x : r.plan.transfers) {
        if (x.dst.task == ts.front()->id && x.src.task >= 0) {
          EXPECT_EQ(r.plan.tasks[x.src.task].devices[0], dev)
              << "device " << dev << "'s first part reads its own tokens";
        }
      }
    }
    // Q the same (in the second block: the first reads the patches, not
    // reduce-scattered tokens), its runs then put together on each device
    // for the heads' products: each device's scores still cover whole
    // heads.
    const std::string q = "encoder.layers.encoder_layer_1.self_attention.q";
    std::map<int, int> q_runs;
    for (const auto& t : r.plan.tasks) {
      if (t.layer == q) ++q_runs[t.devices[0]];
    }
    ASSERT_EQ(q_runs.size(), devices.size());
    for (const auto& [dev, k] : q_runs) EXPECT_GE(k, 2) << dev;
    int64_t heads = 0;
    for (const auto& [dev, h] :
         ScoreHeadsByDevice(r.plan, "encoder.layers.encoder_layer_1")) {
      heads += h;
    }
    EXPECT_EQ(heads, 6);
  }
}

TEST(HeadsStrategy, RefusesAModelWithoutAttention) {
  GraphBuilder b("mlp");
  std::string x = b.Input("x", {1, 8});
  x = b.Linear("b", b.Relu(b.Linear("a", x, 16)), 4);
  Model m;
  m.graph = b.Finish({x}).value();
  PlanOptions po;
  po.strategy = "heads";
  po.devices = EqualDevices(2);
  auto p = MakePlan(m.graph, po);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("does not apply"), std::string::npos);
}

}  // namespace
}  // namespace shoal
