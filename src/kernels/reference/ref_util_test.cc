#include "kernels/reference/ref_util.h"

#include <gtest/gtest.h>

namespace shoal {
namespace ref {
namespace {

TEST(RefUtilTest, TapRangeMatchesCounting) {
  for (int64_t in = 1; in <= 9; ++in)
    for (int64_t out = 1; out <= 9; ++out)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t pad = 0; pad <= 3; ++pad)
          for (int64_t offset = 0; offset <= 6; ++offset) {
            int64_t lo, hi;
            TapRange(in, out, stride, pad, offset, &lo, &hi);
            ASSERT_LE(lo, hi);
            for (int64_t o = 0; o < out; ++o) {
              const int64_t i = o * stride - pad + offset;
              const bool inside = i >= 0 && i < in;
              EXPECT_EQ(inside, o >= lo && o < hi)
                  << in << " " << out << " " << stride << " " << pad << " "
                  << offset << " o=" << o;
            }
          }
}

TEST(RefUtilTest, StridesAndBroadcastStrides) {
  EXPECT_EQ(Strides({2, 3, 4}), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(Strides({}), (std::vector<int64_t>{}));
  EXPECT_EQ(BroadcastStrides({3, 1}, {2, 3, 4}),
            (std::vector<int64_t>{0, 1, 0}));
  EXPECT_EQ(BroadcastStrides({}, {2, 3}), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(BroadcastStrides({2, 3}, {2, 3}), (std::vector<int64_t>{3, 1}));
}

TEST(RefUtilTest, Unflatten) {
  std::vector<int64_t> idx;
  Unflatten(23, {2, 3, 4}, &idx);
  EXPECT_EQ(idx, (std::vector<int64_t>{1, 2, 3}));
  Unflatten(5, {2, 3, 4}, &idx);
  EXPECT_EQ(idx, (std::vector<int64_t>{0, 1, 1}));
}

TEST(RefUtilTest, CheckCallRejectsBadCalls) {
  Node node;
  node.name = "r";
  node.op = "Relu";
  node.inputs = {"x"};
  node.outputs = {"y"};
  float x[2] = {1, 2}, y[2];
  EXPECT_TRUE(CheckCall(node, {{x, {2}}}, {{y, {2}}}).ok());
  EXPECT_FALSE(CheckCall(node, {{x, {2}}}, {{y, {3}}}).ok());        // shape
  EXPECT_FALSE(CheckCall(node, {{x, {2}}}, {{nullptr, {2}}}).ok());  // buffer
  EXPECT_FALSE(CheckCall(node, {{nullptr, {2}}}, {{y, {2}}}).ok());  // input
  EXPECT_FALSE(CheckCall(node, {}, {{y, {2}}}).ok());                // arity
  node.op = "NoSuchOp";
  EXPECT_FALSE(CheckCall(node, {{x, {2}}}, {{y, {2}}}).ok());
}

}  // namespace
}  // namespace ref
}  // namespace shoal
