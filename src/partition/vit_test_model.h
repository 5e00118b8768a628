// Test helper: a small ViT (models/vit.h) with random weights, for the
// tests of the heads strategy and of the blocks it finds.
#ifndef SHOAL_PARTITION_VIT_TEST_MODEL_H_
#define SHOAL_PARTITION_VIT_TEST_MODEL_H_

#include <gtest/gtest.h>

#include "graph/weights.h"
#include "models/vit.h"
#include "models/zoo.h"

namespace shoal::testing {

// 32x32 images in 8x8 patches: 17 tokens of 48 features, 6 heads of 8,
// two blocks; 6 heads give 2, 3 and 4 devices whole heads, unequal on 4.
inline VitConfig SmallVitConfig() {
  VitConfig c;
  c.name = "vit-small";
  c.patch = 8;
  c.layers = 2;
  c.heads = 6;
  c.dim = 48;
  c.mlp = 96;
  c.classes = 10;
  return c;
}

inline Model SmallVit(const VitConfig& c = SmallVitConfig()) {
  Model m;
  auto g = BuildVit(c, {1, 3, 32, 32});
  EXPECT_TRUE(g.ok()) << g.status().message();
  m.graph = std::move(g).value();
  m.weights = RandomWeights(m.graph, 5);
  return m;
}

}  // namespace shoal::testing

#endif  // SHOAL_PARTITION_VIT_TEST_MODEL_H_
