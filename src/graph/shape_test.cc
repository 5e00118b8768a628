// ParseShape / ShapeToString: the text form of shapes on the command line
// (--input-shape) and in reports.
#include "graph/shape.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

TEST(ShapeTest, ToString) {
  EXPECT_EQ(ShapeToString({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(ShapeToString({1000}), "1000");
  EXPECT_EQ(ShapeToString({}), "scalar");
  EXPECT_EQ(ShapeToString({int64_t{1} << 40, 2}), "1099511627776x2");
}

TEST(ShapeTest, NumElements) {
  EXPECT_EQ(NumElements({1, 3, 224, 224}), 150528);
  EXPECT_EQ(NumElements({}), 1);  // a scalar holds one value
  EXPECT_EQ(NumElements({7}), 7);
}

TEST(ShapeTest, ParsesCommaAndXSeparated) {
  Shape s;
  ASSERT_TRUE(ParseShape("1,3,224,224", &s));
  EXPECT_EQ(s, (Shape{1, 3, 224, 224}));
  ASSERT_TRUE(ParseShape("1x3x224x224", &s));
  EXPECT_EQ(s, (Shape{1, 3, 224, 224}));
  ASSERT_TRUE(ParseShape("1, 3, 224, 224", &s));
  EXPECT_EQ(s, (Shape{1, 3, 224, 224}));
  ASSERT_TRUE(ParseShape(" 16 ", &s));
  EXPECT_EQ(s, (Shape{16}));
  ASSERT_TRUE(ParseShape("1,3x4", &s));  // mixed separators are fine
  EXPECT_EQ(s, (Shape{1, 3, 4}));
  ASSERT_TRUE(ParseShape("1099511627776", &s));  // 2^40: the largest extent
  EXPECT_EQ(s, (Shape{int64_t{1} << 40}));
}

TEST(ShapeTest, RoundTrip) {
  for (const Shape& want : {Shape{1}, Shape{1, 3, 16, 112, 112}, Shape{2, 1000},
                            Shape{9, 8, 7, 6, 5, 4}}) {
    Shape got;
    ASSERT_TRUE(ParseShape(ShapeToString(want), &got)) << ShapeToString(want);
    EXPECT_EQ(got, want);
  }
}

TEST(ShapeTest, RejectsMalformedText) {
  for (const char* bad : {"",
                          " ",
                          ",",
                          "x",
                          "1,",
                          ",1",
                          "1,,2",
                          "1xx2",
                          "1x",
                          "0",
                          "1,0,3",
                          "-1",
                          "1,-3",
                          "1.5",
                          "a",
                          "1;2",
                          "1X2",
                          "1099511627777",
                          "99999999999999999999999",
                          "1 2",
                          "1, 2 3",
                          "3 x"}) {
    Shape s = {42};
    EXPECT_FALSE(ParseShape(bad, &s))
        << "'" << bad << "' gave " << ShapeToString(s);
  }
}

}  // namespace
}  // namespace shoal
