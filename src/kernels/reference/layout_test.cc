#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefLayoutTest, ConcatChannels) {
  const Tensor a = Iota({1, 1, 2}), b = Iota({1, 2, 2}, 10);
  EXPECT_TRUE(
      Near(RunOne("Concat", {&a, &b}, MakeAttrs({{"axis", int64_t{1}}})),
           {1, 3, 2}, {0, 1, 10, 11, 12, 13}));
}

TEST(RefLayoutTest, ConcatLastAxisInterleavesRows) {
  const Tensor a = Iota({2, 1}), b = Iota({2, 2}, 10);
  EXPECT_TRUE(
      Near(RunOne("Concat", {&a, &b}, MakeAttrs({{"axis", int64_t{-1}}})),
           {2, 3}, {0, 10, 11, 1, 12, 13}));
}

TEST(RefLayoutTest, FlattenAndReshapeKeepOrder) {
  const Tensor x = Iota({2, 3, 2});
  EXPECT_TRUE(Near(RunOne("Flatten", {&x}), {2, 6}, x.data, 0));
  EXPECT_TRUE(Near(RunOne("Flatten", {&x}, MakeAttrs({{"axis", int64_t{0}}})),
                   {1, 12}, x.data, 0));
  EXPECT_TRUE(Near(RunOne("Reshape", {&x}, MakeAttrs({{"shape", Ints{0, -1}}})),
                   {2, 6}, x.data, 0));
}

TEST(RefLayoutTest, TransposeDefaultReversesAxes) {
  const Tensor x = Iota({2, 3});
  EXPECT_TRUE(Near(RunOne("Transpose", {&x}), {3, 2}, {0, 3, 1, 4, 2, 5}));
}

TEST(RefLayoutTest, TransposeWithPerm) {
  const Tensor x = Iota({2, 2, 3});
  // y[j, k, i] = x[i, j, k].
  EXPECT_TRUE(
      Near(RunOne("Transpose", {&x}, MakeAttrs({{"perm", Ints{1, 2, 0}}})),
           {2, 3, 2}, {0, 6, 1, 7, 2, 8, 3, 9, 4, 10, 5, 11}));
}

TEST(RefLayoutTest, SplitEvenAndExplicit) {
  const Tensor x = Iota({2, 3});
  auto even = RunRef("Split", {&x}, MakeAttrs({{"axis", int64_t{1}}}), 3);
  ASSERT_TRUE(even.ok()) << even.status().ToString();
  EXPECT_TRUE(Near(even.value()[0], {2, 1}, {0, 3}));
  EXPECT_TRUE(Near(even.value()[1], {2, 1}, {1, 4}));
  EXPECT_TRUE(Near(even.value()[2], {2, 1}, {2, 5}));
  auto uneven =
      RunRef("Split", {&x},
             MakeAttrs({{"axis", int64_t{-1}}, {"split", Ints{1, 2}}}), 2);
  ASSERT_TRUE(uneven.ok()) << uneven.status().ToString();
  EXPECT_TRUE(Near(uneven.value()[0], {2, 1}, {0, 3}));
  EXPECT_TRUE(Near(uneven.value()[1], {2, 2}, {1, 2, 4, 5}));
}

TEST(RefLayoutTest, SplitSkipsUnboundOutput) {
  Node node;
  node.name = "s";
  node.op = "Split";
  node.inputs = {"x"};
  node.outputs = {"", "b"};
  const Tensor x = Iota({4});
  Tensor b({2});
  Status s = RefKernelRegistry::Global().Find("Split")(
      node, {{x.data.data(), x.shape}},
      {{nullptr, {2}}, {b.data.data(), b.shape}});
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(Near(b, {2}, {2, 3}));
}

TEST(RefLayoutTest, SpaceToDepthSingleChannel) {
  const Tensor x = Iota({1, 1, 4, 4});
  // Channel i*2 + j holds x[2h + i, 2w + j].
  EXPECT_TRUE(Near(
      RunOne("SpaceToDepth", {&x}, MakeAttrs({{"blocksize", int64_t{2}}})),
      {1, 4, 2, 2}, {0, 2, 8, 10, 1, 3, 9, 11, 4, 6, 12, 14, 5, 7, 13, 15}));
}

TEST(RefLayoutTest, SpaceToDepthChannelIsInnermostOfBlock) {
  const Tensor x = Iota({1, 2, 2, 2});
  // ONNX order: output channel (i*b + j)*C + c.
  EXPECT_TRUE(
      Near(RunOne("SpaceToDepth", {&x}, MakeAttrs({{"blocksize", int64_t{2}}})),
           {1, 8, 1, 1}, {0, 4, 1, 5, 2, 6, 3, 7}));
}

}  // namespace
}  // namespace shoal
