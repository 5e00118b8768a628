#include "plan/cover.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

Region Box(std::vector<int64_t> b, std::vector<int64_t> e) {
  return Region{std::move(b), std::move(e)};
}

TEST(CheckCover, ExactTilesAreCovered) {
  const Shape s{1, 4, 6, 6};
  std::vector<Region> tiles = {Box({0, 0, 0, 0}, {1, 4, 3, 6}),
                               Box({0, 0, 3, 0}, {1, 4, 6, 2}),
                               Box({0, 0, 3, 2}, {1, 4, 6, 6})};
  auto r = CheckCover(s, tiles, /*exclusive=*/true);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->outcome, CoverOutcome::kCovered);
}

TEST(CheckCover, NamesAnElementOfAGapOrAnOverlap) {
  const Shape s{4, 4};
  auto gap = CheckCover(s, {Box({0, 0}, {4, 2}), Box({0, 2}, {3, 4})}, true);
  ASSERT_TRUE(gap.ok());
  EXPECT_EQ(gap->outcome, CoverOutcome::kGap);
  EXPECT_EQ(gap->at, (std::vector<int64_t>{3, 2}));
  auto lap = CheckCover(s, {Box({0, 0}, {4, 3}), Box({0, 2}, {4, 4})}, true);
  ASSERT_TRUE(lap.ok());
  EXPECT_EQ(lap->outcome, CoverOutcome::kOverlap);
  EXPECT_EQ(lap->at, (std::vector<int64_t>{0, 2}));
}

TEST(CheckCover, SummedPartsMayOverlap) {
  auto r = CheckCover({8}, {Box({0}, {8}), Box({0}, {8}), Box({2}, {5})},
                      /*exclusive=*/false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, CoverOutcome::kCovered);
}

TEST(CheckCover, CostFollowsTheBoxesNotTheExtents) {
  // 2^36 elements: a per-element check would need 64 GiB.
  const Shape s{1 << 18, 1 << 18};
  auto r = CheckCover(s, {Box({0, 0}, {1 << 18, 1 << 18})}, true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, CoverOutcome::kCovered);
}

TEST(CheckCover, ScalarsAndTooFineGridsAreHandled) {
  auto r = CheckCover({}, {Box({}, {})}, true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcome, CoverOutcome::kCovered);
  // 3 axes cut in 1000 places each: 10^9 cells, over the cap.
  std::vector<Region> thin;
  for (int64_t i = 0; i < 1000; ++i)
    thin.push_back(Box({i, i, i}, {i + 1, i + 1, i + 1}));
  auto big = CheckCover({1000, 1000, 1000}, thin, true);
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("2^26"), std::string::npos);
}

}  // namespace
}  // namespace shoal
