// Gemm (transA/transB, bias broadcast) and MatMul (1-D operands, batched
// broadcast): shapes and MACs = out_elements * K.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::Ints;
using op_test::MakeAttrs;
using op_test::RunOneNode;
using op_test::Wt;

TEST(GemmTest, FullyConnectedWithTransB) {
  // torch.nn.Linear layout: W is [out, in].
  auto r = RunOneNode(
      "Gemm", {Act("a", {1, 9216}), Wt("w", {4096, 9216}), Wt("b", {4096})},
      MakeAttrs({{"transB", 1}, {"alpha", 1.f}, {"beta", 1.f}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 4096}));
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 4096 * 9216 + 4096);
  EXPECT_EQ(c.weight_elements, 4096 * 9216 + 4096);
  EXPECT_EQ(c.macs, 4096 * 9216);
  EXPECT_EQ(c.input_elements, 9216);
  EXPECT_EQ(c.output_elements, 4096);
}

TEST(GemmTest, NoTranspose) {
  auto r = RunOneNode("Gemm", {Act("a", {2, 5}), Wt("w", {5, 3})});
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{2, 3}));
  EXPECT_EQ(r.cost().macs, 2 * 3 * 5);
  EXPECT_EQ(r.cost().params, 15);
}

TEST(GemmTest, TransAUsesTheOtherAxisForK) {
  // A is [K, M] = [5, 2]: K comes from axis 0, so MACs are 2*3*5, not 2*3*2.
  auto r = RunOneNode("Gemm", {Act("a", {5, 2}), Wt("w", {5, 3})},
                      MakeAttrs({{"transA", 1}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{2, 3}));
  EXPECT_EQ(r.cost().macs, 30);
}

TEST(GemmTest, BothTransposed) {
  auto r = RunOneNode("Gemm", {Act("a", {5, 2}), Wt("w", {3, 5})},
                      MakeAttrs({{"transA", 1}, {"transB", 1}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{2, 3}));
  EXPECT_EQ(r.cost().macs, 30);
}

TEST(GemmTest, BiasBroadcastsToMN) {
  for (const Shape& c : {Shape{3}, Shape{1}, Shape{}, Shape{1, 3}, Shape{2, 1},
                         Shape{2, 3}, Shape{1, 1}}) {
    auto r = RunOneNode("Gemm", {Act("a", {2, 5}), Wt("w", {3, 5}), Wt("c", c)},
                        MakeAttrs({{"transB", 1}}));
    ASSERT_TRUE(r.Ok()) << ShapeToString(c);
    EXPECT_EQ(r.out(), (Shape{2, 3})) << ShapeToString(c);
    EXPECT_EQ(r.cost().params, 15 + NumElements(c)) << ShapeToString(c);
  }
}

TEST(GemmTest, RejectsBiasThatDoesNotBroadcast) {
  for (const Shape& c :
       {Shape{2}, Shape{4}, Shape{3, 3}, Shape{2, 2}, Shape{1, 2, 3}}) {
    auto r = RunOneNode("Gemm", {Act("a", {2, 5}), Wt("w", {3, 5}), Wt("c", c)},
                        MakeAttrs({{"transB", 1}}), 1, "fc_bias");
    EXPECT_TRUE(r.FailsNamingNode()) << ShapeToString(c);
  }
}

TEST(GemmTest, RejectsInnerMismatch) {
  auto r = RunOneNode("Gemm", {Act("a", {2, 5}), Wt("w", {4, 3})}, {}, 1,
                      "fc_inner");
  EXPECT_TRUE(r.FailsNamingNode());
  // With transB, B [3, 4] is read as [4, 3]: K is still 4, not 5.
  auto t = RunOneNode("Gemm", {Act("a", {2, 5}), Wt("w", {3, 4})},
                      MakeAttrs({{"transB", 1}}), 1, "fc_inner_t");
  EXPECT_TRUE(t.FailsNamingNode());
}

TEST(GemmTest, RejectsNon2DOperands) {
  auto r = RunOneNode("Gemm", {Act("a", {1, 2, 5}), Wt("w", {5, 3})}, {}, 1,
                      "fc_rank");
  EXPECT_TRUE(r.FailsNamingNode());
  auto b =
      RunOneNode("Gemm", {Act("a", {2, 5}), Wt("w", {5})}, {}, 1, "fc_rank_b");
  EXPECT_TRUE(b.FailsNamingNode());
}

TEST(MatMulTest, TwoByTwo) {
  auto r = RunOneNode("MatMul", {Act("a", {3, 4}), Wt("b", {4, 5})});
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{3, 5}));
  EXPECT_EQ(r.cost().macs, 3 * 5 * 4);
  EXPECT_EQ(r.cost().params, 20);
}

TEST(MatMulTest, OneDimensionalOperands) {
  auto left = RunOneNode("MatMul", {Act("a", {4}), Act("b", {4, 5})});
  ASSERT_TRUE(left.Ok());
  EXPECT_EQ(left.out(), (Shape{5}));
  EXPECT_EQ(left.cost().macs, 5 * 4);
  EXPECT_EQ(left.cost().params, 0);

  auto right = RunOneNode("MatMul", {Act("a", {3, 4}), Act("b", {4})});
  ASSERT_TRUE(right.Ok());
  EXPECT_EQ(right.out(), (Shape{3}));
  EXPECT_EQ(right.cost().macs, 3 * 4);

  // Dot product: a scalar.
  auto dot = RunOneNode("MatMul", {Act("a", {4}), Act("b", {4})});
  ASSERT_TRUE(dot.Ok());
  EXPECT_EQ(dot.out(), Shape{});
  EXPECT_EQ(dot.cost().macs, 4);
  EXPECT_EQ(dot.cost().output_elements, 1);
}

TEST(MatMulTest, BatchedBroadcast) {
  // Batch [2, 1] with [5] broadcasts to [2, 5].
  auto r = RunOneNode("MatMul", {Act("a", {2, 1, 3, 4}), Act("b", {5, 4, 6})});
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{2, 5, 3, 6}));
  EXPECT_EQ(r.cost().macs, 2 * 5 * 3 * 6 * 4);
  EXPECT_EQ(r.cost().input_elements, 2 * 3 * 4 + 5 * 4 * 6);
}

TEST(MatMulTest, BatchedWithPlainMatrixAndVector) {
  auto m = RunOneNode("MatMul", {Act("a", {2, 3, 4}), Wt("b", {4, 6})});
  ASSERT_TRUE(m.Ok());
  EXPECT_EQ(m.out(), (Shape{2, 3, 6}));
  EXPECT_EQ(m.cost().macs, 2 * 3 * 6 * 4);
  auto v = RunOneNode("MatMul", {Act("a", {2, 3, 4}), Act("b", {4})});
  ASSERT_TRUE(v.Ok());
  EXPECT_EQ(v.out(), (Shape{2, 3}));
  EXPECT_EQ(v.cost().macs, 2 * 3 * 4);
  auto lv = RunOneNode("MatMul", {Act("a", {4}), Act("b", {2, 4, 6})});
  ASSERT_TRUE(lv.Ok());
  EXPECT_EQ(lv.out(), (Shape{2, 6}));
  EXPECT_EQ(lv.cost().macs, 2 * 6 * 4);
}

TEST(MatMulTest, RejectsInnerMismatch) {
  auto r = RunOneNode("MatMul", {Act("a", {3, 4}), Act("b", {5, 6})}, {}, 1,
                      "mm_inner");
  EXPECT_TRUE(r.FailsNamingNode());
  auto v =
      RunOneNode("MatMul", {Act("a", {3}), Act("b", {4})}, {}, 1, "mm_dot");
  EXPECT_TRUE(v.FailsNamingNode());
}

TEST(MatMulTest, RejectsBatchMismatch) {
  auto r = RunOneNode("MatMul", {Act("a", {2, 3, 4}), Act("b", {3, 4, 5})}, {},
                      1, "mm_batch");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(MatMulTest, RejectsScalarOperand) {
  auto r = RunOneNode("MatMul", {Act("a", {}), Act("b", {4, 5})}, {}, 1,
                      "mm_scalar");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(MatMulTest, RejectsAttributesAndThirdInput) {
  // MatMul has no attributes: the verifier rejects any as unsupported.
  auto r = RunOneNode("MatMul", {Act("a", {3, 4}), Act("b", {4, 5})},
                      MakeAttrs({{"transB", 1}}), 1, "mm_attr");
  ASSERT_TRUE(r.infer.ok());
  EXPECT_EQ(r.verify.code(), Code::kUnsupported);
  EXPECT_NE(r.verify.message().find("'mm_attr'"), std::string::npos);
  auto three =
      RunOneNode("MatMul", {Act("a", {3, 4}), Act("b", {4, 5}), Act("c", {5})},
                 {}, 1, "mm_three");
  EXPECT_TRUE(three.FailsNamingNode());
}

}  // namespace
}  // namespace shoal
