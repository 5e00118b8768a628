// Data-movement ops (ReduceMean, Concat, Flatten, Reshape, Transpose, Slice,
// Split, Pad, SpaceToDepth): output shapes, no weights or MACs, and errors
// that name the node.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "ops/axis.h"
#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::Ints;
using op_test::MakeAttrs;
using op_test::RunOneNode;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

void ExpectNoWork(const op_test::OneNode& r) {
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 0);
  EXPECT_EQ(c.weight_elements, 0);
  EXPECT_EQ(c.macs, 0);
}

// ---- ReduceMean ----

TEST(ReduceMeanTest, SpatialMeanKeepDims) {
  auto r = RunOneNode("ReduceMean", {Act("x", {1, 512, 7, 7})},
                      MakeAttrs({{"axes", Ints{2, 3}}, {"keepdims", 1}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 512, 1, 1}));
  ExpectNoWork(r);
  EXPECT_EQ(r.cost().output_elements, 512);
}

TEST(ReduceMeanTest, DropDimsNegativeAxesAndDefaults) {
  auto drop = RunOneNode("ReduceMean", {Act("x", {1, 512, 7, 7})},
                         MakeAttrs({{"axes", Ints{2, 3}}, {"keepdims", 0}}));
  ASSERT_TRUE(drop.Ok());
  EXPECT_EQ(drop.out(), (Shape{1, 512}));
  auto neg = RunOneNode("ReduceMean", {Act("x", {1, 512, 7, 7})},
                        MakeAttrs({{"axes", Ints{-1}}}));
  ASSERT_TRUE(neg.Ok());
  EXPECT_EQ(neg.out(), (Shape{1, 512, 7, 1}));
  // No axes: reduce all; keepdims defaults to 1.
  auto all = RunOneNode("ReduceMean", {Act("x", {2, 3, 4})});
  ASSERT_TRUE(all.Ok());
  EXPECT_EQ(all.out(), (Shape{1, 1, 1}));
  auto scalar = RunOneNode("ReduceMean", {Act("x", {2, 3, 4})},
                           MakeAttrs({{"keepdims", 0}}));
  ASSERT_TRUE(scalar.Ok());
  EXPECT_EQ(scalar.out(), Shape{});
  EXPECT_EQ(scalar.cost().output_elements, 1);
}

TEST(ReduceMeanTest, RejectsAxisOutOfRange) {
  for (int64_t axis : {4, -5}) {
    auto r = RunOneNode("ReduceMean", {Act("x", {1, 2, 3, 4})},
                        MakeAttrs({{"axes", Ints{axis}}}), 1, "reduce_axis");
    EXPECT_TRUE(r.FailsNamingNode()) << axis;
  }
}

// ---- Concat ----

TEST(ConcatTest, ChannelsAndNegativeAxis) {
  auto r = RunOneNode("Concat",
                      {Act("a", {1, 64, 28, 28}), Act("b", {1, 32, 28, 28}),
                       Act("c", {1, 16, 28, 28})},
                      MakeAttrs({{"axis", 1}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 112, 28, 28}));
  ExpectNoWork(r);
  EXPECT_EQ(r.cost().input_elements, 112 * 28 * 28);
  auto w =
      RunOneNode("Concat", {Act("a", {1, 2, 3, 4}), Act("b", {1, 2, 3, 5})},
                 MakeAttrs({{"axis", -1}}));
  ASSERT_TRUE(w.Ok());
  EXPECT_EQ(w.out(), (Shape{1, 2, 3, 9}));
  auto one = RunOneNode("Concat", {Act("a", {1, 2})}, MakeAttrs({{"axis", 0}}));
  ASSERT_TRUE(one.Ok());
  EXPECT_EQ(one.out(), (Shape{1, 2}));
  // The same tensor twice (a split-and-merge collapse).
  auto twice = RunOneNode("Concat", {Act("a", {1, 2}), Act("a", {1, 2})},
                          MakeAttrs({{"axis", 1}}));
  ASSERT_TRUE(twice.Ok());
  EXPECT_EQ(twice.out(), (Shape{1, 4}));
}

TEST(ConcatTest, RejectsMismatchOffAxis) {
  auto r = RunOneNode("Concat",
                      {Act("a", {1, 64, 28, 28}), Act("b", {1, 32, 14, 28})},
                      MakeAttrs({{"axis", 1}}), 1, "concat_hw");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(ConcatTest, RejectsRankMismatchMissingAndBadAxis) {
  auto rank = RunOneNode("Concat", {Act("a", {1, 4, 2}), Act("b", {1, 4})},
                         MakeAttrs({{"axis", 1}}), 1, "concat_rank");
  EXPECT_TRUE(rank.FailsNamingNode());
  auto missing = RunOneNode("Concat", {Act("a", {1, 4}), Act("b", {1, 4})}, {},
                            1, "concat_noaxis");
  EXPECT_TRUE(missing.FailsNamingNode());
  for (int64_t axis : {2, -3}) {
    auto bad = RunOneNode("Concat", {Act("a", {1, 4}), Act("b", {1, 4})},
                          MakeAttrs({{"axis", axis}}), 1, "concat_axis");
    EXPECT_TRUE(bad.FailsNamingNode()) << axis;
  }
}

// ---- Flatten ----

TEST(FlattenTest, Axes) {
  const std::pair<int64_t, Shape> cases[] = {{1, {1, 25088}}, {0, {1, 25088}},
                                             {2, {512, 49}},  {-1, {3584, 7}},
                                             {4, {25088, 1}}, {-4, {1, 25088}}};
  for (const auto& [axis, want] : cases) {
    auto r = RunOneNode("Flatten", {Act("x", {1, 512, 7, 7})},
                        MakeAttrs({{"axis", axis}}));
    ASSERT_TRUE(r.Ok()) << axis;
    EXPECT_EQ(r.out(), want) << axis;
    ExpectNoWork(r);
  }
  auto def = RunOneNode("Flatten", {Act("x", {2, 3, 4})});
  ASSERT_TRUE(def.Ok());
  EXPECT_EQ(def.out(), (Shape{2, 12}));
}

TEST(FlattenTest, RejectsAxisOutOfRange) {
  for (int64_t axis : {5, -5}) {
    auto r = RunOneNode("Flatten", {Act("x", {1, 512, 7, 7})},
                        MakeAttrs({{"axis", axis}}), 1, "flatten_axis");
    EXPECT_TRUE(r.FailsNamingNode()) << axis;
  }
}

// ---- Reshape ----

TEST(ReshapeTest, ZeroCopiesAndMinusOneInfers) {
  const std::pair<Ints, Shape> cases[] = {
      {{0, -1}, {1, 25088}},
      {{-1}, {25088}},
      {{0, 0, -1}, {1, 512, 49}},
      {{1, 512, 49}, {1, 512, 49}},
      {{0, 0, 7, 7}, {1, 512, 7, 7}},
      {{-1, 7, 7}, {512, 7, 7}},
      {{0, 2, -1, 7}, {1, 2, 1792, 7}},
  };
  for (const auto& [shape, want] : cases) {
    auto r = RunOneNode("Reshape", {Act("x", {1, 512, 7, 7})},
                        MakeAttrs({{"shape", shape}}));
    ASSERT_TRUE(r.Ok()) << ShapeToString(want);
    EXPECT_EQ(r.out(), want);
    ExpectNoWork(r);
  }
}

TEST(ReshapeTest, RejectsBadShapes) {
  const Ints bad[] = {
      {-1, -1},      // two unknowns
      {5, 5},        // 25 != 24 elements
      {5, -1},       // 24 not divisible by 5
      {0, 0, 0, 0},  // 0 past the input rank
      {-2, 12},      // negative extent
      {2, 3, 4, 2},  // too many elements
  };
  for (const Ints& shape : bad) {
    auto r = RunOneNode("Reshape", {Act("x", {2, 3, 4})},
                        MakeAttrs({{"shape", shape}}), 1, "reshape_bad");
    EXPECT_TRUE(r.FailsNamingNode()) << ShapeToString(shape);
  }
  auto missing =
      RunOneNode("Reshape", {Act("x", {2, 3, 4})}, {}, 1, "reshape_noshape");
  EXPECT_TRUE(missing.FailsNamingNode());
}

// ---- Transpose ----

TEST(TransposeTest, PermAndDefaultReverse) {
  auto r = RunOneNode("Transpose", {Act("x", {1, 3, 4, 5})},
                      MakeAttrs({{"perm", Ints{0, 2, 3, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 4, 5, 3}));
  ExpectNoWork(r);
  auto rev = RunOneNode("Transpose", {Act("x", {1, 3, 4, 5})});
  ASSERT_TRUE(rev.Ok());
  EXPECT_EQ(rev.out(), (Shape{5, 4, 3, 1}));
}

TEST(TransposeTest, RejectsBadPerm) {
  const Ints bad[] = {{0, 1, 2}, {0, 0, 1, 2}, {0, 1, 2, 4}, {-1, 0, 1, 2}};
  for (const Ints& perm : bad) {
    auto r = RunOneNode("Transpose", {Act("x", {1, 3, 4, 5})},
                        MakeAttrs({{"perm", perm}}), 1, "transpose_perm");
    EXPECT_TRUE(r.FailsNamingNode()) << ShapeToString(perm);
  }
}

// ---- Slice ----

// ONNX Slice by its spec text, element by element: normalise and clamp the
// bounds, then walk from start towards end.
int64_t ReferenceSliceCount(int64_t dim, int64_t start, int64_t end,
                            int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
  }
  int64_t n = 0;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step) ++n;
  return n;
}

TEST(SliceExtentTest, MatchesReferenceExhaustively) {
  for (int64_t dim = 1; dim <= 7; ++dim)
    for (int64_t start = -10; start <= 10; ++start)
      for (int64_t end = -10; end <= 10; ++end)
        for (int64_t step : {-3, -2, -1, 1, 2, 3, 5})
          EXPECT_EQ(SliceExtent(dim, start, end, step),
                    ReferenceSliceCount(dim, start, end, step))
              << dim << " [" << start << ":" << end << ":" << step << "]";
}

TEST(SliceExtentTest, ExtremeBounds) {
  EXPECT_EQ(SliceExtent(10, 0, kMax, 1), 10);
  EXPECT_EQ(SliceExtent(10, kMin, kMax, 1), 10);
  EXPECT_EQ(SliceExtent(10, -1, kMin, -1), 10);  // full reverse
  EXPECT_EQ(SliceExtent(10, kMax, kMin, -1), 10);
  EXPECT_EQ(SliceExtent(10, kMax, kMax, 1), 0);
}

TEST(SliceTest, Shapes) {
  struct Case {
    Attrs attrs;
    Shape want;
  };
  const Case cases[] = {
      {MakeAttrs({{"starts", Ints{2}}, {"ends", Ints{6}}, {"axes", Ints{1}}}),
       {1, 4, 10, 10}},
      // Negative indices count from the end: [7, 9).
      {MakeAttrs(
           {{"starts", Ints{-3}}, {"ends", Ints{-1}}, {"axes", Ints{-1}}}),
       {1, 8, 10, 2}},
      {MakeAttrs({{"starts", Ints{0}},
                  {"ends", Ints{10}},
                  {"axes", Ints{2}},
                  {"steps", Ints{3}}}),
       {1, 8, 4, 10}},  // 0, 3, 6, 9
      // Clamping: out-of-range bounds are cut to the axis.
      {MakeAttrs(
           {{"starts", Ints{-100}}, {"ends", Ints{kMax}}, {"axes", Ints{3}}}),
       {1, 8, 10, 10}},
      // Reverse the whole axis.
      {MakeAttrs({{"starts", Ints{-1}},
                  {"ends", Ints{kMin}},
                  {"axes", Ints{1}},
                  {"steps", Ints{-1}}}),
       {1, 8, 10, 10}},
      {MakeAttrs({{"starts", Ints{100}},
                  {"ends", Ints{-100}},
                  {"axes", Ints{2}},
                  {"steps", Ints{-3}}}),
       {1, 8, 4, 10}},  // 9, 6, 3, 0
      // Several axes; axes default to 0, 1, ...
      {MakeAttrs({{"starts", Ints{0, 1, 2}}, {"ends", Ints{1, 5, 8}}}),
       {1, 4, 6, 10}},
      {MakeAttrs({{"starts", Ints{1, 1}},
                  {"ends", Ints{9, 9}},
                  {"axes", Ints{3, 2}},
                  {"steps", Ints{2, 4}}}),
       {1, 8, 2, 4}},
  };
  for (const Case& c : cases) {
    auto r = RunOneNode("Slice", {Act("x", {1, 8, 10, 10})}, c.attrs);
    ASSERT_TRUE(r.Ok()) << ShapeToString(c.want);
    EXPECT_EQ(r.out(), c.want);
    ExpectNoWork(r);
  }
}

TEST(SliceTest, RejectsBadAttributes) {
  const Attrs bad[] = {
      MakeAttrs({{"starts", Ints{0}}, {"ends", Ints{1}}, {"steps", Ints{0}}}),
      MakeAttrs({{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{4}}}),
      MakeAttrs({{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{-5}}}),
      MakeAttrs({{"starts", Ints{0, 0}}, {"ends", Ints{1}}}),
      MakeAttrs({{"starts", Ints{0}}, {"ends", Ints{1}}, {"axes", Ints{0, 1}}}),
      // Empty results: InferShapes refuses zero extents.
      MakeAttrs({{"starts", Ints{3}}, {"ends", Ints{3}}, {"axes", Ints{1}}}),
      MakeAttrs({{"starts", Ints{5}}, {"ends", Ints{2}}, {"axes", Ints{1}}}),
  };
  for (const Attrs& a : bad) {
    auto r = RunOneNode("Slice", {Act("x", {1, 8, 10, 10})}, a, 1, "slice_bad");
    EXPECT_TRUE(r.FailsNamingNode());
  }
}

// ---- Split ----

TEST(SplitTest, EqualParts) {
  auto r = RunOneNode("Split", {Act("x", {1, 6, 4, 4})},
                      MakeAttrs({{"axis", 1}}), 3);
  ASSERT_TRUE(r.Ok());
  for (int i = 0; i < 3; ++i) EXPECT_EQ(r.out(i), (Shape{1, 2, 4, 4})) << i;
  ExpectNoWork(r);
  EXPECT_EQ(r.cost().output_elements, 6 * 4 * 4);
  // Axis defaults to 0.
  auto def = RunOneNode("Split", {Act("x", {4, 3})}, {}, 2);
  ASSERT_TRUE(def.Ok());
  EXPECT_EQ(def.out(0), (Shape{2, 3}));
  EXPECT_EQ(def.out(1), (Shape{2, 3}));
}

TEST(SplitTest, GivenSizesAndNegativeAxis) {
  auto r = RunOneNode("Split", {Act("x", {1, 6, 4, 4})},
                      MakeAttrs({{"axis", 1}, {"split", Ints{1, 2, 3}}}), 3);
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(0), (Shape{1, 1, 4, 4}));
  EXPECT_EQ(r.out(1), (Shape{1, 2, 4, 4}));
  EXPECT_EQ(r.out(2), (Shape{1, 3, 4, 4}));
  auto neg = RunOneNode("Split", {Act("x", {1, 6, 4, 4})},
                        MakeAttrs({{"axis", -1}, {"split", Ints{1, 3}}}), 2);
  ASSERT_TRUE(neg.Ok());
  EXPECT_EQ(neg.out(0), (Shape{1, 6, 4, 1}));
  EXPECT_EQ(neg.out(1), (Shape{1, 6, 4, 3}));
}

TEST(SplitTest, RejectsBadSplits) {
  struct Case {
    Attrs attrs;
    int outputs;
  };
  const Case bad[] = {
      {MakeAttrs({{"axis", 1}}), 4},                            // 6 / 4 uneven
      {MakeAttrs({{"axis", 1}, {"split", Ints{2, 2}}}), 2},     // sums to 4
      {MakeAttrs({{"axis", 1}, {"split", Ints{2, 2, 2}}}), 2},  // 3 sizes
      {MakeAttrs({{"axis", 4}}), 2},                            // no axis 4
      {MakeAttrs({{"axis", 1}, {"split", Ints{6, 0}}}), 2},     // empty part
  };
  for (const Case& c : bad) {
    auto r = RunOneNode("Split", {Act("x", {1, 6, 4, 4})}, c.attrs, c.outputs,
                        "split_bad");
    EXPECT_TRUE(r.FailsNamingNode());
  }
}

// ---- Pad ----

TEST(PadTest, BeginsThenEnds) {
  // pads = [x1_begin, x2_begin, ..., x1_end, x2_end, ...].
  for (const char* mode : {"constant", "reflect", "edge"}) {
    auto r = RunOneNode("Pad", {Act("x", {1, 3, 4, 4})},
                        MakeAttrs({{"pads", Ints{0, 0, 1, 2, 0, 0, 3, 4}},
                                   {"mode", std::string(mode)},
                                   {"value", 0.f}}));
    ASSERT_TRUE(r.Ok()) << mode;
    EXPECT_EQ(r.out(), (Shape{1, 3, 8, 10})) << mode;
    ExpectNoWork(r);
  }
}

TEST(PadTest, RejectsWrongPadCountAndMode) {
  auto n = RunOneNode("Pad", {Act("x", {1, 3, 4, 4})},
                      MakeAttrs({{"pads", Ints{1, 1, 1, 1}}}), 1, "pad_count");
  EXPECT_TRUE(n.FailsNamingNode());
  auto m = RunOneNode("Pad", {Act("x", {1, 3, 4, 4})},
                      MakeAttrs({{"pads", Ints{0, 0, 1, 1, 0, 0, 1, 1}},
                                 {"mode", std::string("wrap")}}),
                      1, "pad_mode");
  EXPECT_TRUE(m.FailsNamingNode());
  EXPECT_EQ(m.infer.code(), Code::kUnsupported);
  // Negative pads crop; cropping everything is an error.
  auto crop = RunOneNode("Pad", {Act("x", {1, 3, 4, 4})},
                         MakeAttrs({{"pads", Ints{0, 0, -2, 0, 0, 0, -2, 0}}}),
                         1, "pad_crop");
  EXPECT_TRUE(crop.FailsNamingNode());
}

// ---- SpaceToDepth ----

TEST(SpaceToDepthTest, YoloReorg) {
  auto r = RunOneNode("SpaceToDepth", {Act("x", {1, 64, 26, 26})},
                      MakeAttrs({{"blocksize", 2}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 256, 13, 13}));
  ExpectNoWork(r);
  EXPECT_EQ(r.cost().input_elements, r.cost().output_elements);
}

TEST(SpaceToDepthTest, RejectsBadBlocksizeAndRank) {
  auto three = RunOneNode("SpaceToDepth", {Act("x", {1, 64, 26, 26})},
                          MakeAttrs({{"blocksize", 3}}), 1, "s2d_three");
  EXPECT_TRUE(three.FailsNamingNode());
  auto none = RunOneNode("SpaceToDepth", {Act("x", {1, 64, 26, 26})}, {}, 1,
                         "s2d_none");
  EXPECT_TRUE(none.FailsNamingNode());
  auto rank = RunOneNode("SpaceToDepth", {Act("x", {64, 26, 26})},
                         MakeAttrs({{"blocksize", 2}}), 1, "s2d_rank");
  EXPECT_TRUE(rank.FailsNamingNode());
}

}  // namespace
}  // namespace shoal
