// Conv shape inference and cost: 1-D/2-D/3-D, stride, padding, dilation,
// groups (depthwise included) and auto_pad. Expected MACs are
// out_elements * (C / group) * prod(kernel), worked out by hand per case.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Absent;
using op_test::Act;
using op_test::Ints;
using op_test::MakeAttrs;
using op_test::RunOneNode;
using op_test::Wt;

TEST(ConvTest, AlexNetConv1WithBias) {
  auto r = RunOneNode(
      "Conv",
      {Act("x", {1, 3, 224, 224}), Wt("w", {64, 3, 11, 11}), Wt("b", {64})},
      MakeAttrs({{"strides", Ints{4, 4}},
                 {"pads", Ints{2, 2, 2, 2}},
                 {"kernel_shape", Ints{11, 11}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 64, 55, 55}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 64 * 3 * 11 * 11 + 64);
  EXPECT_EQ(c.weight_elements, 64 * 3 * 11 * 11 + 64);
  EXPECT_EQ(c.macs, int64_t{64} * 55 * 55 * 3 * 11 * 11);  // 70,276,800
  EXPECT_EQ(c.input_elements, 3 * 224 * 224);
  EXPECT_EQ(c.output_elements, 64 * 55 * 55);
  EXPECT_EQ(c.weight_bytes(), c.weight_elements * 4);
  EXPECT_EQ(c.mac_kind, MacKind::kGemm);  // 11x11, stride 4: im2col
}

TEST(ConvTest, OneDimensionalStridedPadded) {
  // (10 + 1 + 1 - 3) / 2 + 1 = 5.
  auto r = RunOneNode("Conv", {Act("x", {1, 4, 10}), Wt("w", {8, 4, 3})},
                      MakeAttrs({{"strides", Ints{2}}, {"pads", Ints{1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 8, 5}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 8 * 4 * 3);
  EXPECT_EQ(c.macs, 8 * 5 * 4 * 3);
}

TEST(ConvTest, AbsentOptionalBias) {
  auto r =
      RunOneNode("Conv", {Act("x", {1, 4, 10}), Wt("w", {8, 4, 3}), Absent()});
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 8, 8}));
  EXPECT_EQ(r.cost().params, 8 * 4 * 3);
}

TEST(ConvTest, ThreeDimensionalC3DConv1) {
  auto r = RunOneNode("Conv",
                      {Act("x", {1, 3, 16, 112, 112}),
                       Wt("w", {64, 3, 3, 3, 3}), Wt("b", {64})},
                      MakeAttrs({{"pads", Ints{1, 1, 1, 1, 1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 64, 16, 112, 112}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 64 * 81 + 64);
  EXPECT_EQ(c.macs, int64_t{64} * 16 * 112 * 112 * 81);  // 1,040,449,536
}

TEST(ConvTest, ThreeDimensionalPerAxisStride) {
  // D: (16 + 2 - 3) / 1 + 1 = 16; H, W: (112 + 2 - 3) / 2 + 1 = 56.
  auto r = RunOneNode(
      "Conv", {Act("x", {1, 3, 16, 112, 112}), Wt("w", {8, 3, 3, 3, 3})},
      MakeAttrs(
          {{"strides", Ints{1, 2, 2}}, {"pads", Ints{1, 1, 1, 1, 1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 8, 16, 56, 56}));
  EXPECT_EQ(r.cost().macs, int64_t{8} * 16 * 56 * 56 * 81);
}

TEST(ConvTest, DilationAndAsymmetricPads) {
  // Dilation 2 makes the 3x3 kernel span 5. pads = [h_begin, w_begin,
  // h_end, w_end]: H = (10 + 1 + 2 - 5) + 1 = 9, W = (10 - 5) + 1 = 6.
  auto r = RunOneNode(
      "Conv", {Act("x", {1, 2, 10, 10}), Wt("w", {4, 2, 3, 3})},
      MakeAttrs({{"dilations", Ints{2, 2}}, {"pads", Ints{1, 0, 2, 0}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 4, 9, 6}));
  EXPECT_EQ(r.cost().macs, 4 * 9 * 6 * 2 * 9);
  EXPECT_EQ(r.cost().mac_kind, MacKind::kGemm);  // dilated: no Winograd
}

TEST(ConvTest, ThreeByThreeStrideOneIsWinogradKind) {
  auto r = RunOneNode("Conv", {Act("x", {1, 8, 10, 10}), Wt("w", {4, 8, 3, 3})},
                      MakeAttrs({{"pads", Ints{1, 1, 1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.cost().mac_kind, MacKind::kWinograd3x3);
  auto strided =
      RunOneNode("Conv", {Act("x", {1, 8, 10, 10}), Wt("w", {4, 8, 3, 3})},
                 MakeAttrs({{"strides", Ints{2, 2}}}));
  ASSERT_TRUE(strided.Ok());
  EXPECT_EQ(strided.cost().mac_kind, MacKind::kGemm);
}

TEST(ConvTest, GroupedConvolution) {
  auto r = RunOneNode("Conv", {Act("x", {1, 8, 5, 5}), Wt("w", {6, 4, 3, 3})},
                      MakeAttrs({{"group", 2}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 6, 3, 3}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 6 * 4 * 9);
  // Each output sees only its group's 4 channels.
  EXPECT_EQ(c.macs, 6 * 3 * 3 * 4 * 9);
  EXPECT_EQ(c.mac_kind, MacKind::kGemm);  // grouped, not depthwise
}

TEST(ConvTest, Depthwise) {
  auto r = RunOneNode(
      "Conv",
      {Act("x", {1, 32, 112, 112}), Wt("w", {32, 1, 3, 3}), Wt("b", {32})},
      MakeAttrs({{"group", 32}, {"pads", Ints{1, 1, 1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 32, 112, 112}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 32 * 9 + 32);
  EXPECT_EQ(c.macs, 32 * 112 * 112 * 9);
  EXPECT_EQ(c.mac_kind, MacKind::kDepthwise);
}

TEST(ConvTest, DepthwiseWithChannelMultiplier) {
  // group = C, M = 2C: each input channel feeds two filters.
  auto r = RunOneNode("Conv", {Act("x", {1, 16, 8, 8}), Wt("w", {32, 1, 3, 3})},
                      MakeAttrs({{"group", 16}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 32, 6, 6}));
  EXPECT_EQ(r.cost().macs, 32 * 6 * 6 * 9);
}

TEST(ConvTest, AutoPadSameUpperAndLower) {
  for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
    auto r = RunOneNode(
        "Conv", {Act("x", {1, 3, 7, 8}), Wt("w", {5, 3, 3, 3})},
        MakeAttrs({{"auto_pad", std::string(mode)}, {"strides", Ints{2, 2}}}));
    ASSERT_TRUE(r.Ok()) << mode;
    // SAME: ceil(in / stride).
    EXPECT_EQ(r.out(), (Shape{1, 5, 4, 4})) << mode;
    EXPECT_EQ(r.cost().macs, 5 * 4 * 4 * 27) << mode;
  }
}

TEST(ConvTest, AutoPadSameWithDilationKeepsExtent) {
  auto r = RunOneNode("Conv", {Act("x", {1, 1, 10, 10}), Wt("w", {1, 1, 3, 3})},
                      MakeAttrs({{"auto_pad", std::string("SAME_UPPER")},
                                 {"dilations", Ints{2, 2}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 1, 10, 10}));
}

TEST(ConvTest, AutoPadValidIgnoresPads) {
  auto r = RunOneNode("Conv", {Act("x", {1, 3, 7, 7}), Wt("w", {5, 3, 3, 3})},
                      MakeAttrs({{"auto_pad", std::string("VALID")},
                                 {"pads", Ints{1, 1, 1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 5, 5, 5}));
}

TEST(ConvTest, RejectsChannelMismatch) {
  auto r = RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 2, 3, 3})},
                      {}, 1, "conv_channels");
  EXPECT_TRUE(r.FailsNamingNode());
  EXPECT_EQ(r.infer.code(), Code::kInvalidArgument);
}

TEST(ConvTest, RejectsGroupThatDoesNotDivideChannels) {
  auto r = RunOneNode("Conv", {Act("x", {1, 6, 8, 8}), Wt("w", {4, 2, 3, 3})},
                      MakeAttrs({{"group", 4}}), 1, "conv_group");
  EXPECT_TRUE(r.FailsNamingNode());
  auto zero =
      RunOneNode("Conv", {Act("x", {1, 6, 8, 8}), Wt("w", {4, 6, 3, 3})},
                 MakeAttrs({{"group", 0}}), 1, "conv_group0");
  EXPECT_TRUE(zero.FailsNamingNode());
  // Output channels must divide too.
  auto m = RunOneNode("Conv", {Act("x", {1, 4, 8, 8}), Wt("w", {3, 2, 3, 3})},
                      MakeAttrs({{"group", 2}}), 1, "conv_group_m");
  EXPECT_TRUE(m.FailsNamingNode());
}

TEST(ConvTest, RejectsBadBias) {
  auto r = RunOneNode(
      "Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3}), Wt("b", {5})}, {},
      1, "conv_bias");
  EXPECT_TRUE(r.FailsNamingNode());
  auto r2 = RunOneNode(
      "Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3}), Wt("b", {1, 4})},
      {}, 1, "conv_bias2d");
  EXPECT_TRUE(r2.FailsNamingNode());
}

TEST(ConvTest, RejectsRankProblems) {
  auto w_rank = RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3})},
                           {}, 1, "conv_wrank");
  EXPECT_TRUE(w_rank.FailsNamingNode());
  auto x_rank = RunOneNode("Conv", {Act("x", {1, 3}), Wt("w", {4, 3})}, {}, 1,
                           "conv_xrank");
  EXPECT_TRUE(x_rank.FailsNamingNode());
  auto x6 = RunOneNode(
      "Conv", {Act("x", {1, 1, 2, 2, 2, 2}), Wt("w", {1, 1, 1, 1, 1, 1})}, {},
      1, "conv_6d");
  EXPECT_TRUE(x6.FailsNamingNode());
}

TEST(ConvTest, RejectsBadGeometryAttributes) {
  auto strides =
      RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3})},
                 MakeAttrs({{"strides", Ints{2}}}), 1, "conv_strides");
  EXPECT_TRUE(strides.FailsNamingNode());
  auto pads =
      RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3})},
                 MakeAttrs({{"pads", Ints{-1, 0, 0, 0}}}), 1, "conv_pads");
  EXPECT_TRUE(pads.FailsNamingNode());
  auto ks = RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3})},
                       MakeAttrs({{"kernel_shape", Ints{5, 5}}}), 1,
                       "conv_kernel_shape");
  EXPECT_TRUE(ks.FailsNamingNode());
}

TEST(ConvTest, RejectsKernelLargerThanInput) {
  auto r = RunOneNode("Conv", {Act("x", {1, 3, 2, 2}), Wt("w", {4, 3, 3, 3})},
                      {}, 1, "conv_too_big");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(ConvTest, RejectsUnknownAutoPadAsUnsupported) {
  auto r = RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3})},
                      MakeAttrs({{"auto_pad", std::string("SAME_MIDDLE")}}), 1,
                      "conv_autopad");
  EXPECT_TRUE(r.FailsNamingNode());
  EXPECT_EQ(r.infer.code(), Code::kUnsupported);
}

TEST(ConvTest, RejectsWrongInputCount) {
  auto r =
      RunOneNode("Conv", {Act("x", {1, 3, 8, 8})}, {}, 1, "conv_one_input");
  EXPECT_TRUE(r.FailsNamingNode());
  auto r4 = RunOneNode("Conv",
                       {Act("x", {1, 3, 8, 8}), Wt("w", {4, 3, 3, 3}),
                        Wt("b", {4}), Wt("extra", {4})},
                       {}, 1, "conv_four_inputs");
  EXPECT_TRUE(r4.FailsNamingNode());
  // The weight is required even though it is an input slot.
  auto absent = RunOneNode("Conv", {Act("x", {1, 3, 8, 8}), Absent()}, {}, 1,
                           "conv_absent_w");
  EXPECT_TRUE(absent.FailsNamingNode());
}

}  // namespace
}  // namespace shoal
