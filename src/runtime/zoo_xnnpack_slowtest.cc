// XNNPACK against the reference backend on every zoo model end to end,
// within 1e-4 relative. The ImageNet-sized models run at a smaller input
// (their layers are the same; the reference kernels' plain loops on 224 x
// 224 inputs would take minutes): what is checked is every layer's kind
// and geometry, not the input's extent.
#include <gtest/gtest.h>

#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

// A smaller input that every layer of the model still takes.
Shape SmallInput(const ZooEntry& e) {
  static const std::map<std::string, Shape> small = {
      {"alexnet", {1, 3, 127, 127}},    {"c3d", {1, 3, 16, 16, 16}},
      {"mobilenet-v1", {1, 3, 96, 96}}, {"mobilenet-v2", {1, 3, 96, 96}},
      {"resnet18", {1, 3, 64, 64}},     {"resnet50", {1, 3, 64, 64}},
      {"vgg-s", {1, 3, 127, 127}},      {"vgg16", {1, 3, 64, 64}},
      {"xception", {1, 3, 96, 96}},     {"yolov2", {1, 3, 96, 96}},
  };
  auto it = small.find(e.name);
  return it == small.end() ? e.input_shape : it->second;
}

class ZooXnnpackTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ZooXnnpackTest, XnnpackMatchesReference) {
  const ZooEntry* e = Zoo::Global().Find(GetParam());
  ASSERT_NE(e, nullptr);
  auto g = e->build(SmallInput(*e));
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ExecutorStats st;
  ExpectBackendsAgree(*g, 11, Backend::kXnnpack, &st);
  // Every conv and fc layer of the 2-D models is XNNPACK's; what remains
  // on the reference kernels is what XNNPACK lacks (LRN, SpaceToDepth,
  // C3D's 3-D convolutions and pools).
  if (e->name != "c3d") {
    EXPECT_GT(st.xnnpack_steps, st.reference_steps);
  }
  // Only weights a reference step reads stay plain: C3D's, and the ViT's
  // LayerNorm scales and shifts (this XNNPACK has no LayerNorm) and class
  // token (a Concat with a constant operand).
  const bool plain = e->name == "c3d" || e->name == "vit_b_16";
  EXPECT_EQ(st.retained_weight_bytes > 0, plain) << e->name;
}

std::vector<std::string> ZooNames() {
  std::vector<std::string> out;
  for (const auto& e : Zoo::Global().entries()) out.push_back(e.name);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Zoo, ZooXnnpackTest, ::testing::ValuesIn(ZooNames()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace shoal
