// Hand-checked Conv cases; random cases against PyTorch are in
// oracle_test.cc.
#include <gtest/gtest.h>

#include "kernels/reference/ref_test_util.h"

namespace shoal {
namespace {

using namespace ref_test;  // NOLINT

TEST(RefConvTest, OnesKernelSumsWindows) {
  const Tensor x = Iota({1, 1, 4, 4});
  const Tensor w({1, 1, 3, 3}, Floats(9, 1.f));
  // Windows of rows/cols 0-2 and 1-3 of 0..15.
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w}), {1, 1, 2, 2}, {45, 54, 81, 90}));
}

TEST(RefConvTest, PaddingAndStride) {
  const Tensor x = Iota({1, 1, 4, 4});
  const Tensor w({1, 1, 3, 3}, Floats(9, 1.f));
  const Attrs a =
      MakeAttrs({{"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}});
  // Windows centred on (0,0), (0,2), (2,0), (2,2); padding adds nothing.
  EXPECT_TRUE(
      Near(RunOne("Conv", {&x, &w}, a), {1, 1, 2, 2}, {10, 24, 51, 90}));
}

TEST(RefConvTest, AsymmetricKernelWeightsAndBias) {
  // 2 input channels, 2 output maps, 1x2 kernel: checks weight indexing.
  const Tensor x({1, 2, 1, 3}, {1, 2, 3, 10, 20, 30});
  const Tensor w({2, 2, 1, 2}, {1, 0, 0, 1,   /* map 0: x0[i] + x1[i+1] */
                                0, 2, 1, 0}); /* map 1: 2 x0[i+1] + x1[i] */
  const Tensor b({2}, {100, -100});
  EXPECT_TRUE(
      Near(RunOne("Conv", {&x, &w, &b}), {1, 2, 1, 2}, {121, 132, -86, -74}));
}

TEST(RefConvTest, GroupsKeepChannelsApart) {
  // group 2: map 0 sees channels 0-1, map 1 channels 2-3; 1x1 kernels.
  const Tensor x({1, 4, 1, 1}, {1, 2, 3, 4});
  const Tensor w({2, 2, 1, 1}, {1, 10, 100, 1000});
  const Attrs a = MakeAttrs({{"group", int64_t{2}}});
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w}, a), {1, 2, 1, 1}, {21, 4300}));
}

TEST(RefConvTest, DepthwiseWithBias) {
  const Tensor x({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  const Tensor w({3, 1, 1, 1}, {2, -1, 0.5f});
  const Tensor b({3}, {1, 2, 3});
  const Attrs a = MakeAttrs({{"group", int64_t{3}}});
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w, &b}, a), {1, 3, 1, 2},
                   {3, 5, -1, -2, 5.5f, 6}));
}

TEST(RefConvTest, Dilation1D) {
  const Tensor x({1, 1, 5}, {1, 2, 3, 4, 5});
  const Tensor w({1, 1, 2}, {1, 10});
  const Attrs a = MakeAttrs({{"dilations", Ints{2}}});
  // y[i] = x[i] + 10 x[i + 2].
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w}, a), {1, 1, 3}, {31, 42, 53}));
}

TEST(RefConvTest, SameUpperAndLowerPadding) {
  const Tensor x({1, 1, 4}, {1, 2, 3, 4});
  const Tensor w({1, 1, 3}, {1, 1, 1});
  // Output 2, total padding 1: SAME_UPPER puts it at the end.
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w},
                          MakeAttrs({{"auto_pad", std::string("SAME_UPPER")},
                                     {"strides", Ints{2}}})),
                   {1, 1, 2}, {6, 7}));
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w},
                          MakeAttrs({{"auto_pad", std::string("SAME_LOWER")},
                                     {"strides", Ints{2}}})),
                   {1, 1, 2}, {3, 9}));
}

TEST(RefConvTest, ThreeDimensional) {
  const Tensor x = Iota({1, 1, 2, 2, 3});
  const Tensor w({1, 1, 2, 2, 2}, Floats(8, 1.f));
  // Two windows along W: cols 0-1 and 1-2 of every (d, h).
  EXPECT_TRUE(
      Near(RunOne("Conv", {&x, &w}), {1, 1, 1, 1, 2},
           {0 + 1 + 3 + 4 + 6 + 7 + 9 + 10, 1 + 2 + 4 + 5 + 7 + 8 + 10 + 11}));
}

TEST(RefConvTest, BatchUsesItsOwnImage) {
  const Tensor x({2, 1, 1, 1}, {3, 5});
  const Tensor w({1, 1, 1, 1}, {2});
  EXPECT_TRUE(Near(RunOne("Conv", {&x, &w}), {2, 1, 1, 1}, {6, 10}));
}

TEST(RefConvTest, RejectsMismatchedOutputShape) {
  Node node;
  node.name = "c";
  node.op = "Conv";
  node.inputs = {"x", "w"};
  node.outputs = {"y"};
  const Tensor x = Iota({1, 1, 4, 4});
  const Tensor w({1, 1, 3, 3}, Floats(9, 1.f));
  Tensor y({1, 1, 3, 3});
  Status s = RefKernelRegistry::Global().Find("Conv")(
      node, {{x.data.data(), x.shape}, {w.data.data(), w.shape}},
      {{y.data.data(), y.shape}});
  EXPECT_EQ(s.code(), Code::kInvalidArgument) << s.ToString();
}

}  // namespace
}  // namespace shoal
