#include "partition/transformer_blocks.h"

#include <gtest/gtest.h>

#include "models/builder.h"
#include "models/load_model.h"
#include "partition/vit_test_model.h"

namespace shoal {
namespace {

TEST(TransformerBlocks, AViTsAttentionAndMlpsAreFound) {
  const Model m = testing::SmallVit();
  const auto att = FindAttentionBlocks(m.graph);
  ASSERT_EQ(att.size(), 2u);
  const std::string l0 = "encoder.layers.encoder_layer_0.";
  EXPECT_EQ(att[0].q, l0 + "self_attention.q");
  EXPECT_EQ(att[0].k, l0 + "self_attention.k");
  EXPECT_EQ(att[0].v, l0 + "self_attention.v");
  EXPECT_EQ(att[0].out, l0 + "self_attention.out_proj");
  EXPECT_EQ(att[0].heads, 6);
  EXPECT_EQ(att[0].head_width, 8);
  std::vector<std::string> taken;
  for (const auto& a : att) taken.insert(taken.end(), {a.q, a.k, a.v, a.out});
  const auto mlp = FindMlpBlocks(m.graph, taken);
  ASSERT_EQ(mlp.size(), 2u);
  EXPECT_EQ(mlp[1].up, "encoder.layers.encoder_layer_1.mlp.0");
  EXPECT_EQ(mlp[1].down, "encoder.layers.encoder_layer_1.mlp.3");
  // The classifier reads the class token, not an elementwise path from a
  // layer: no MLP ends or starts there.
  for (const auto& b : mlp) EXPECT_NE(b.down, "heads.head");
}

// torchvision's nn.MultiheadAttention: one projection packs Q, K and V,
// each cut from it by a Slice of its columns.
TEST(TransformerBlocks, APackedProjectionIsFound) {
  VitConfig c = testing::SmallVitConfig();
  c.packed_qkv = true;
  const Model m = testing::SmallVit(c);
  const auto att = FindAttentionBlocks(m.graph);
  ASSERT_EQ(att.size(), 2u);
  const std::string p = "encoder.layers.encoder_layer_0.self_attention.in_proj";
  EXPECT_EQ(att[0].q, p);
  EXPECT_EQ(att[0].k, p);
  EXPECT_EQ(att[0].v, p);
  EXPECT_EQ(att[0].SegmentsOf(p), 3);
  EXPECT_EQ(att[0].q_begin, 0);
  EXPECT_EQ(att[0].k_begin, 48);
  EXPECT_EQ(att[0].v_begin, 96);
  EXPECT_EQ(att[0].heads, 6);
  EXPECT_EQ(att[0].head_width, 8);
  EXPECT_EQ(FindMlpBlocks(m.graph, {att[0].q, att[0].out, att[1].q, att[1].out})
                .size(),
            2u);
}

TEST(TransformerBlocks, ACnnHasNone) {
  auto m = LoadModel("alexnet", LoadOptions{});
  ASSERT_TRUE(m.ok());
  EXPECT_TRUE(FindAttentionBlocks(m->graph).empty());
}

// A layer whose output also feeds a residual sum is not the first half of
// an MLP: the sum reads a tensor from outside the pair.
TEST(TransformerBlocks, AResidualEndsAnMlp) {
  GraphBuilder b("residual");
  std::string x = b.Input("x", {4, 8});
  std::string y = b.Linear("a", x, 8);
  std::string z = b.Add(y, x);
  z = b.Linear("b", z, 8);
  auto g = b.Finish({z});
  ASSERT_TRUE(g.ok());
  EXPECT_TRUE(FindMlpBlocks(*g, {}).empty());
}

}  // namespace
}  // namespace shoal
