#include "partition/region_maps.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

Region Box(std::vector<int64_t> b, std::vector<int64_t> e) {
  return Region{std::move(b), std::move(e)};
}

TEST(MapBoxThroughReshape, ColumnsOfWholeHeadsAreHeads) {
  const auto m = MapBoxThroughReshape(Box({0, 128}, {197, 256}), {197, 768},
                                      {1, 197, 12, 64});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, Box({0, 0, 2, 0}, {1, 197, 4, 64}));
}

TEST(MapBoxThroughReshape, HeadsBackToColumns) {
  const auto m = MapBoxThroughReshape(Box({0, 0, 2, 0}, {1, 197, 4, 64}),
                                      {1, 197, 12, 64}, {197, 768});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, Box({0, 128}, {197, 256}));
}

TEST(MapBoxThroughReshape, ColumnsCuttingAHeadDoNotMap) {
  EXPECT_FALSE(MapBoxThroughReshape(Box({0, 100}, {197, 200}), {197, 768},
                                    {1, 197, 12, 64})
                   .has_value());
}

TEST(MapBoxThroughReshape, AxesOfExtentOneComeAndGo) {
  auto m = MapBoxThroughReshape(Box({0, 8}, {17, 24}), {17, 48}, {1, 17, 48});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, Box({0, 0, 8}, {1, 17, 24}));
  m = MapBoxThroughReshape(*m, {1, 17, 48}, {17, 48, 1});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, Box({0, 8, 0}, {17, 24, 1}));
}

// Rows of a [2, 3] are runs of 3 elements, which a [3, 2] holds only
// across its rows: not a box.
TEST(MapBoxThroughReshape, ARunThatIsNotABoxOfTheNewAxes) {
  EXPECT_FALSE(
      MapBoxThroughReshape(Box({0, 0}, {1, 3}), {2, 3}, {3, 2}).has_value());
  // Whole rows of a group that merges: [2, 3] rows as a [6]: a run.
  const auto m = MapBoxThroughReshape(Box({1, 0}, {2, 3}), {2, 3}, {6});
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(*m, Box({3}, {6}));
}

TEST(MapBoxThroughReshape, ShapesOfOtherSizesDoNotMap) {
  EXPECT_FALSE(
      MapBoxThroughReshape(Box({0, 0}, {2, 3}), {2, 3}, {7}).has_value());
  EXPECT_FALSE(
      MapBoxThroughReshape(Box({0}, {6}), {2, 3}, {6}).has_value());
}

TEST(PermuteBox, AxesMoveWithTheirBounds) {
  EXPECT_EQ(PermuteBox(Box({0, 2, 0, 0}, {1, 4, 17, 8}), {0, 2, 1, 3}),
            Box({0, 0, 2, 0}, {1, 17, 4, 8}));
  EXPECT_EQ(PermuteBox(Box({0, 2, 0, 0}, {1, 4, 17, 8}), {0, 2, 3, 1}),
            Box({0, 0, 0, 2}, {1, 17, 8, 4}));
}

}  // namespace
}  // namespace shoal
