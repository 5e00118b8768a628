#include "plan/region.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

Tensor Iota(const Shape& s) {
  Tensor t(s);
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = static_cast<float>(i);
  return t;
}

TEST(Region, ElementsIntersectContain) {
  Region a = Region::Slice({1, 8, 4, 4}, 1, 2, 6);
  EXPECT_EQ(a.elements(), 4 * 16);
  EXPECT_EQ(a.extent(), (Shape{1, 4, 4, 4}));
  Region b = Region::Slice({1, 8, 4, 4}, 1, 5, 8);
  auto c = Intersect(a, b);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->begin[1], 5);
  EXPECT_EQ(c->end[1], 6);
  EXPECT_FALSE(Intersect(Region::Slice({1, 8}, 1, 0, 2),
                         Region::Slice({1, 8}, 1, 2, 4)));
  EXPECT_TRUE(Contains(Region::Full({1, 8, 4, 4}), a));
  EXPECT_FALSE(Contains(a, b));
  EXPECT_EQ(c->RelativeTo(a).begin[1], 3);
}

TEST(Region, CopyAndSumMoveTheRightElements) {
  const Tensor src = Iota({2, 3, 4});
  Tensor dst({2, 2, 2});
  Region from{{0, 1, 1}, {2, 3, 3}};
  ASSERT_TRUE(
      CopyRegion(src, from, &dst, Region::Full(dst.shape), Merge::kCopy).ok());
  // dst[i][j][k] = src[i][1+j][1+k]
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        EXPECT_EQ(dst.data[i * 4 + j * 2 + k],
                  src.data[i * 12 + (1 + j) * 4 + 1 + k]);
  ASSERT_TRUE(
      CopyRegion(src, from, &dst, Region::Full(dst.shape), Merge::kSum).ok());
  EXPECT_EQ(dst.data[7], 2 * src.data[1 * 12 + 2 * 4 + 2]);
}

TEST(Region, CopyRejectsMismatchedOrOutOfRangeBoxes) {
  const Tensor src = Iota({4, 4});
  Tensor dst({2, 2});
  EXPECT_FALSE(CopyRegion(src, Region{{0, 0}, {3, 2}}, &dst,
                          Region::Full({2, 2}), Merge::kCopy)
                   .ok());
  EXPECT_FALSE(CopyRegion(src, Region{{3, 3}, {5, 5}}, &dst,
                          Region::Full({2, 2}), Merge::kCopy)
                   .ok());
}

// A box of a view: [2, 12] read as [2, 3, 2, 2], the box of rows 1 of
// every channel is four columns of each row.
TEST(Region, ExtractsABoxOfAView) {
  const Tensor src = Iota({2, 12});
  auto t = ExtractRegionOfView(src, {2, 3, 2, 2},
                               Region{{0, 0, 1, 0}, {2, 3, 2, 2}});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->shape, (Shape{2, 3, 1, 2}));
  for (int64_t r = 0; r < 2; ++r) {
    for (int64_t c = 0; c < 3; ++c) {
      for (int64_t w = 0; w < 2; ++w) {
        EXPECT_EQ(t->data[r * 6 + c * 2 + w], src.data[r * 12 + c * 4 + 2 + w]);
      }
    }
  }
  // A view of other elements, or a box outside it, is refused.
  EXPECT_FALSE(
      ExtractRegionOfView(src, {2, 3, 2, 3}, Region::Full({2, 3, 2, 3})).ok());
  EXPECT_FALSE(
      ExtractRegionOfView(src, {2, 3, 2, 2}, Region{{0, 0, 0, 0}, {2, 3, 3, 2}})
          .ok());
}

TEST(Region, ReshapeMapsContiguousRunsOnly) {
  // A channel slice of NCHW is one run of the flattened vector.
  auto m = MapThroughReshape(Region::Slice({1, 8, 3, 3}, 1, 2, 5), {1, 8, 3, 3},
                             {1, 72});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->begin, (std::vector<int64_t>{0, 18}));
  EXPECT_EQ(m->end, (std::vector<int64_t>{1, 45}));
  // Rows of one channel are not a run of the flattened vector... unless
  // the channel has extent 1 and rows are full: then they are.
  auto rows = MapThroughReshape(Region{{0, 0, 1, 0}, {1, 8, 2, 3}},
                                {1, 8, 3, 3}, {1, 72});
  EXPECT_FALSE(rows.has_value());
  auto one = MapThroughReshape(Region{{0, 2, 1, 0}, {1, 3, 3, 3}}, {1, 8, 3, 3},
                               {1, 72});
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(one->begin[1], 21);
  EXPECT_EQ(one->end[1], 27);
  // The mapping moves exactly the same elements.
  const Tensor t = Iota({1, 8, 3, 3});
  Tensor flat = t;
  flat.shape = {1, 72};
  Region r = Region::Slice({1, 8, 3, 3}, 1, 2, 5);
  auto a = ExtractRegion(t, r);
  auto b = ExtractRegion(flat, *MapThroughReshape(r, t.shape, flat.shape));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a.value().data, b.value().data);
}

}  // namespace
}  // namespace shoal
