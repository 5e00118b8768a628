#include "plan/deal.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace shoal {
namespace {

int Count(const std::vector<int>& v, int d) {
  return static_cast<int>(std::count(v.begin(), v.end(), d));
}

TEST(Deal, EqualWeightsAreThePlainRoundRobin) {
  EXPECT_EQ(DealInProportion({0, 1, 2, 3}, {1, 1, 1, 1}),
            (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(DealInProportion({4, 7}, {3, 3}), (std::vector<int>{4, 7}));
  EXPECT_EQ(DealInProportion({5}, {2}), (std::vector<int>{5}));
}

TEST(Deal, TurnsFollowTheWeightsAndAreSpreadOut) {
  // examples/mixed.yaml's speeds: laptop 16, pi4 3, two pi3s 1.
  const auto v = DealInProportion({0, 1, 2, 3}, {16, 3, 1, 1});
  ASSERT_EQ(v.size(), 21u);
  EXPECT_EQ(Count(v, 0), 16);
  EXPECT_EQ(Count(v, 1), 3);
  EXPECT_EQ(Count(v, 2), 1);
  EXPECT_EQ(Count(v, 3), 1);
  // Spread: the pi4's three turns are not next to each other, and the two
  // slow devices are not dealt back to back.
  for (size_t i = 0; i + 1 < v.size(); ++i) {
    EXPECT_FALSE(v[i] == 1 && v[i + 1] == 1) << i;
    EXPECT_FALSE(v[i] >= 2 && v[i + 1] >= 2) << i;
  }
  // Common factors go: 2:2:4 is 1:1:2.
  const auto w = DealInProportion({0, 1, 2}, {2, 2, 4});
  EXPECT_EQ(w.size(), 4u);
  EXPECT_EQ(Count(w, 2), 2);
}

TEST(Deal, TheListIsBoundedAndEveryDeviceKeepsATurn) {
  const auto v = DealInProportion({0, 1, 2}, {1000, 1, 0});
  EXPECT_LE(v.size(), 66u);  // at most max_len, plus one turn for each slow one
  EXPECT_GE(Count(v, 1), 1);
  EXPECT_GE(Count(v, 2), 1);
  EXPECT_GT(Count(v, 0), 50);
}

}  // namespace
}  // namespace shoal
