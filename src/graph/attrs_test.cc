// Attrs: typed getters with defaults, the int/float conversions ONNX models
// rely on, and the text form used in dumps.
#include "graph/attrs.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

using Ints = std::vector<int64_t>;
using Floats = std::vector<float>;

TEST(AttrsTest, SetGetEachKind) {
  Attrs a;
  a.Set("group", int64_t{32});
  a.Set("alpha", 0.25f);
  a.Set("auto_pad", std::string("SAME_UPPER"));
  a.Set("pads", Ints{1, 2, 3, 4});
  a.Set("scales", Floats{0.5f, 2.f});
  EXPECT_EQ(a.GetInt("group"), 32);
  EXPECT_FLOAT_EQ(a.GetFloat("alpha"), 0.25f);
  EXPECT_EQ(a.GetString("auto_pad"), "SAME_UPPER");
  EXPECT_EQ(a.GetInts("pads"), (Ints{1, 2, 3, 4}));
  EXPECT_EQ(a.GetFloats("scales"), (Floats{0.5f, 2.f}));
  EXPECT_EQ(a.map().size(), 5u);
}

TEST(AttrsTest, DefaultsWhenMissing) {
  Attrs a;
  EXPECT_FALSE(a.Has("group"));
  EXPECT_EQ(a.GetInt("group"), 0);
  EXPECT_EQ(a.GetInt("group", 1), 1);
  EXPECT_FLOAT_EQ(a.GetFloat("alpha", 0.01f), 0.01f);
  EXPECT_EQ(a.GetString("auto_pad", "NOTSET"), "NOTSET");
  EXPECT_EQ(a.GetInts("strides", {1, 1}), (Ints{1, 1}));
  EXPECT_TRUE(a.GetInts("strides").empty());
  EXPECT_EQ(a.GetFloats("scales", {1.f}), (Floats{1.f}));
}

TEST(AttrsTest, NumericConversions) {
  Attrs a;
  a.Set("f", 2.75f);
  a.Set("i", int64_t{3});
  // Some exporters write integral attributes as floats and vice versa.
  EXPECT_EQ(a.GetInt("f"), 2);  // truncated
  EXPECT_FLOAT_EQ(a.GetFloat("i"), 3.f);
  // A single int where a list is expected (e.g. kernel_shape: 3).
  EXPECT_EQ(a.GetInts("i"), (Ints{3}));
}

TEST(AttrsTest, WrongKindGivesDefault) {
  Attrs a;
  a.Set("s", std::string("x"));
  a.Set("v", Ints{1, 2});
  EXPECT_EQ(a.GetInt("s", 7), 7);
  EXPECT_FLOAT_EQ(a.GetFloat("v", 1.5f), 1.5f);
  EXPECT_EQ(a.GetString("v", "d"), "d");
  EXPECT_EQ(a.GetInts("s", {9}), (Ints{9}));
  EXPECT_EQ(a.GetFloats("v", {4.f}), (Floats{4.f}));
}

TEST(AttrsTest, OverwriteEraseAndEquality) {
  Attrs a, b;
  a.Set("k", int64_t{1});
  a.Set("k", int64_t{2});
  EXPECT_EQ(a.GetInt("k"), 2);
  b.Set("k", int64_t{2});
  EXPECT_EQ(a, b);
  b.Set("k", 2.f);  // same value, other kind: not equal
  EXPECT_FALSE(a == b);
  a.Erase("k");
  EXPECT_FALSE(a.Has("k"));
  a.Erase("k");  // erasing a missing key is harmless
  EXPECT_EQ(a, Attrs());
}

TEST(AttrsTest, ToString) {
  EXPECT_EQ(AttrToString(int64_t{-3}), "-3");
  EXPECT_EQ(AttrToString(0.5f), "0.5");
  EXPECT_EQ(AttrToString(std::string("VALID")), "VALID");
  EXPECT_EQ(AttrToString(Ints{1, 2, 3}), "[1,2,3]");
  EXPECT_EQ(AttrToString(Ints{}), "[]");
  EXPECT_EQ(AttrToString(Floats{0.5f, 2.f}), "[0.5,2]");
}

}  // namespace
}  // namespace shoal
