// Add, Sub, Mul, Div: numpy broadcasting, weight operands counted as params.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::RunOneNode;
using op_test::Wt;

const char* const kBinaryOps[] = {"Add", "Sub", "Mul", "Div"};

struct BroadcastCase {
  Shape a, b, want;
};

TEST(BinaryTest, Broadcasting) {
  const BroadcastCase cases[] = {
      {{1, 64, 56, 56}, {1, 64, 56, 56}, {1, 64, 56, 56}},  // residual add
      {{1, 64, 56, 56}, {64, 1, 1}, {1, 64, 56, 56}},       // per-channel
      {{1, 3, 1, 5}, {4, 1}, {1, 3, 4, 5}},                 // both sides grow
      {{2, 1}, {1, 3}, {2, 3}},
      {{5}, {}, {5}},  // scalar
      {{}, {2, 3}, {2, 3}},
      {{1, 1}, {1, 1, 1}, {1, 1, 1}},
      {{8, 1, 6, 1}, {7, 1, 5}, {8, 7, 6, 5}},  // numpy's example
  };
  for (const char* op : kBinaryOps) {
    for (const BroadcastCase& bc : cases) {
      auto r = RunOneNode(op, {Act("a", bc.a), Act("b", bc.b)});
      ASSERT_TRUE(r.Ok()) << op << " " << ShapeToString(bc.a) << " "
                          << ShapeToString(bc.b);
      EXPECT_EQ(r.out(), bc.want) << op;
      NodeCost c = r.cost();
      EXPECT_EQ(c.macs, 0) << op;
      EXPECT_EQ(c.params, 0) << op;
      EXPECT_EQ(c.input_elements, NumElements(bc.a) + NumElements(bc.b));
      EXPECT_EQ(c.output_elements, NumElements(bc.want));
    }
  }
}

TEST(BinaryTest, SameInputTwice) {
  auto r = RunOneNode("Mul", {Act("x", {1, 4}), Act("x", {1, 4})});
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 4}));
}

TEST(BinaryTest, WeightOperandIsParams) {
  // A per-channel scale stored as a weight (e.g. a folded affine layer).
  for (const char* op : kBinaryOps) {
    auto r = RunOneNode(op, {Act("x", {1, 64, 8, 8}), Wt("s", {64, 1, 1})});
    ASSERT_TRUE(r.Ok()) << op;
    NodeCost c = r.cost();
    EXPECT_EQ(c.params, 64) << op;
    EXPECT_EQ(c.weight_elements, 64) << op;
    EXPECT_EQ(c.input_elements, 64 * 8 * 8) << op;
  }
}

TEST(BinaryTest, RejectsShapesThatDoNotBroadcast) {
  const std::pair<Shape, Shape> bad[] = {{{1, 3, 4}, {1, 2, 4}},
                                         {{3}, {4}},
                                         {{2, 3}, {3, 2}},
                                         {{5, 1}, {1, 2, 4}}};
  for (const char* op : kBinaryOps) {
    for (const auto& [a, b] : bad) {
      auto r = RunOneNode(op, {Act("a", a), Act("b", b)}, {}, 1,
                          std::string("bcast_") + op);
      EXPECT_TRUE(r.FailsNamingNode())
          << op << " " << ShapeToString(a) << " " << ShapeToString(b);
    }
  }
}

TEST(BinaryTest, RejectsWrongArity) {
  for (const char* op : kBinaryOps) {
    auto one = RunOneNode(op, {Act("a", {2})}, {}, 1, std::string("one_") + op);
    EXPECT_TRUE(one.FailsNamingNode()) << op;
    auto three = RunOneNode(op, {Act("a", {2}), Act("b", {2}), Act("c", {2})},
                            {}, 1, std::string("three_") + op);
    EXPECT_TRUE(three.FailsNamingNode()) << op;
  }
}

}  // namespace
}  // namespace shoal
