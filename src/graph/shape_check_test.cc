#include "graph/shape_check.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(CheckedElements, CountsOrdinaryShapes) {
  EXPECT_EQ(CheckedElements({1, 3, 224, 224}, "x").value(), 150528);
  EXPECT_EQ(CheckedElements({}, "x").value(), 1);
  EXPECT_EQ(CheckedElements({7, 0, int64_t{1} << 62}, "x").value(), 0);
  EXPECT_EQ(CheckedElements({int64_t{1} << 36}, "x").value(),
            kMaxTensorElements);
}

TEST(CheckedElements, RefusesOverflowNegativesAndHugeRanks) {
  const int64_t big = int64_t{1} << 62;
  for (const Shape& s :
       {Shape{big, big}, Shape{big, 4}, Shape{1 << 20, 1 << 17},
        Shape{(int64_t{1} << 36) + 1}}) {
    auto n = CheckedElements(s, "input 'x'");
    ASSERT_FALSE(n.ok()) << ShapeToString(s);
    EXPECT_NE(n.status().message().find("input 'x'"), std::string::npos);
    EXPECT_NE(n.status().message().find("2^36"), std::string::npos);
  }
  auto neg = CheckedElements({2, -3}, "w");
  ASSERT_FALSE(neg.ok());
  EXPECT_NE(neg.status().message().find("negative"), std::string::npos);
  EXPECT_FALSE(CheckedElements(Shape(17, 1), "r").ok());
  EXPECT_TRUE(CheckedElements(Shape(16, 1), "r").ok());
}

TEST(MulWithin, StopsAtTheLimitAndAtOverflow) {
  int64_t r = 0;
  EXPECT_TRUE(MulWithin(1 << 10, 1 << 10, 1 << 20, &r));
  EXPECT_EQ(r, 1 << 20);
  EXPECT_FALSE(MulWithin(1 << 10, (1 << 10) + 1, 1 << 20, &r));
  EXPECT_FALSE(MulWithin(int64_t{1} << 62, 4, INT64_MAX, &r));
}

}  // namespace
}  // namespace shoal
