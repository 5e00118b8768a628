// The dashboard's lists of re-plans not made and requests failed keep the
// newest few, oldest first, each stamped, and count every one.
#include "serve/recent_events.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(RecentEvents, KeepsTheNewestInOrderAndCountsAll) {
  RecentEvents r(3);
  EXPECT_TRUE(r.List().empty());
  for (int i = 0; i < 5; ++i) r.Add({{"request", i}});
  const auto l = r.List();
  ASSERT_EQ(l.size(), 3u);
  EXPECT_EQ(l[0]["request"], 2);
  EXPECT_EQ(l[2]["request"], 4);
  EXPECT_EQ(r.total(), 5);
  for (const auto& e : l) EXPECT_GT(e["unix_ms"].get<int64_t>(), 0);
}

TEST(RecentEvents, KeepsAGivenTime) {
  RecentEvents r(0);  // at least one
  r.Add({{"unix_ms", 42}, {"error", "x"}});
  r.Add({{"unix_ms", 43}, {"error", "y"}});
  const auto l = r.List();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0]["unix_ms"], 43);
  EXPECT_EQ(l[0]["error"], "y");
}

}  // namespace
}  // namespace shoal
