// MaxPool / AveragePool (2-D and 3-D, ceil_mode, auto_pad) and the global
// pools. Pools have no weights and no MACs in shoal's cost model.
#include <gtest/gtest.h>

#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::Ints;
using op_test::MakeAttrs;
using op_test::RunOneNode;

void ExpectNoWork(const op_test::OneNode& r) {
  NodeCost c = r.cost();
  EXPECT_EQ(c.params, 0);
  EXPECT_EQ(c.weight_elements, 0);
  EXPECT_EQ(c.macs, 0);
}

TEST(PoolTest, MaxPool2DResNetStem) {
  auto r = RunOneNode("MaxPool", {Act("x", {1, 64, 112, 112})},
                      MakeAttrs({{"kernel_shape", Ints{3, 3}},
                                 {"strides", Ints{2, 2}},
                                 {"pads", Ints{1, 1, 1, 1}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 64, 56, 56}));
  ExpectNoWork(r);
  EXPECT_EQ(r.cost().input_elements, 64 * 112 * 112);
  EXPECT_EQ(r.cost().output_elements, 64 * 56 * 56);
}

TEST(PoolTest, MaxPoolCeilMode) {
  // 112 with k3 s2: floor gives 55, ceil 56 (the last window hangs over).
  Attrs a = MakeAttrs({{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}});
  auto floor = RunOneNode("MaxPool", {Act("x", {1, 8, 112, 112})}, a);
  ASSERT_TRUE(floor.Ok());
  EXPECT_EQ(floor.out(), (Shape{1, 8, 55, 55}));
  a.Set("ceil_mode", 1);
  auto ceil = RunOneNode("MaxPool", {Act("x", {1, 8, 112, 112})}, a);
  ASSERT_TRUE(ceil.Ok());
  EXPECT_EQ(ceil.out(), (Shape{1, 8, 56, 56}));
  // 111 divides exactly: ceil_mode changes nothing.
  auto exact = RunOneNode("MaxPool", {Act("x", {1, 96, 111, 111})}, a);
  ASSERT_TRUE(exact.Ok());
  EXPECT_EQ(exact.out(), (Shape{1, 96, 55, 55}));
}

TEST(PoolTest, CeilModeLastWindowMustStartInsideInput) {
  // 5 + 1 + 1 padded, k2 s2: ceil((7 - 2) / 2) + 1 = 4 windows would start
  // at -1, 1, 3, 5, but the one at 5 lies wholly in the right padding, so
  // 3 outputs (PyTorch and ONNX agree).
  auto r = RunOneNode("MaxPool", {Act("x", {1, 1, 5, 5})},
                      MakeAttrs({{"kernel_shape", Ints{2, 2}},
                                 {"strides", Ints{2, 2}},
                                 {"pads", Ints{1, 1, 1, 1}},
                                 {"ceil_mode", 1}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 1, 3, 3}));
}

TEST(PoolTest, MaxPool3DC3D) {
  // C3D pool1 keeps depth: kernel and stride [1, 2, 2].
  auto p1 = RunOneNode(
      "MaxPool", {Act("x", {1, 64, 16, 112, 112})},
      MakeAttrs({{"kernel_shape", Ints{1, 2, 2}}, {"strides", Ints{1, 2, 2}}}));
  ASSERT_TRUE(p1.Ok());
  EXPECT_EQ(p1.out(), (Shape{1, 64, 16, 56, 56}));
  ExpectNoWork(p1);
  // C3D pool5 pads H and W by one: [1, 512, 1, 4, 4] = 8192 fc6 inputs.
  auto p5 = RunOneNode("MaxPool", {Act("x", {1, 512, 2, 7, 7})},
                       MakeAttrs({{"kernel_shape", Ints{2, 2, 2}},
                                  {"strides", Ints{2, 2, 2}},
                                  {"pads", Ints{0, 1, 1, 0, 1, 1}}}));
  ASSERT_TRUE(p5.Ok());
  EXPECT_EQ(p5.out(), (Shape{1, 512, 1, 4, 4}));
}

TEST(PoolTest, MaxPoolDilationAndAutoPad) {
  auto d = RunOneNode(
      "MaxPool", {Act("x", {1, 1, 10, 10})},
      MakeAttrs({{"kernel_shape", Ints{3, 3}}, {"dilations", Ints{2, 2}}}));
  ASSERT_TRUE(d.Ok());
  EXPECT_EQ(d.out(), (Shape{1, 1, 6, 6}));
  auto same = RunOneNode("MaxPool", {Act("x", {1, 1, 7, 7})},
                         MakeAttrs({{"kernel_shape", Ints{3, 3}},
                                    {"strides", Ints{2, 2}},
                                    {"auto_pad", std::string("SAME_UPPER")}}));
  ASSERT_TRUE(same.Ok());
  EXPECT_EQ(same.out(), (Shape{1, 1, 4, 4}));
}

TEST(PoolTest, MaxPool1D) {
  auto r =
      RunOneNode("MaxPool", {Act("x", {1, 4, 9})},
                 MakeAttrs({{"kernel_shape", Ints{3}}, {"strides", Ints{3}}}));
  ASSERT_TRUE(r.Ok());
  EXPECT_EQ(r.out(), (Shape{1, 4, 3}));
}

TEST(PoolTest, AveragePool2DAnd3D) {
  auto r2 = RunOneNode(
      "AveragePool", {Act("x", {1, 8, 7, 7})},
      MakeAttrs({{"kernel_shape", Ints{7, 7}}, {"count_include_pad", 0}}));
  ASSERT_TRUE(r2.Ok());
  EXPECT_EQ(r2.out(), (Shape{1, 8, 1, 1}));
  ExpectNoWork(r2);
  auto r3 = RunOneNode(
      "AveragePool", {Act("x", {1, 4, 8, 8, 8})},
      MakeAttrs({{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}}));
  ASSERT_TRUE(r3.Ok());
  EXPECT_EQ(r3.out(), (Shape{1, 4, 4, 4, 4}));
  ExpectNoWork(r3);
}

TEST(PoolTest, AveragePoolCeilModeAndPads) {
  auto c = RunOneNode("AveragePool", {Act("x", {1, 2, 5, 5})},
                      MakeAttrs({{"kernel_shape", Ints{2, 2}},
                                 {"strides", Ints{2, 2}},
                                 {"ceil_mode", 1}}));
  ASSERT_TRUE(c.Ok());
  EXPECT_EQ(c.out(), (Shape{1, 2, 3, 3}));
  auto p = RunOneNode("AveragePool", {Act("x", {1, 2, 5, 5})},
                      MakeAttrs({{"kernel_shape", Ints{3, 3}},
                                 {"pads", Ints{1, 1, 1, 1}},
                                 {"count_include_pad", 1}}));
  ASSERT_TRUE(p.Ok());
  EXPECT_EQ(p.out(), (Shape{1, 2, 5, 5}));
}

TEST(PoolTest, GlobalPools) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    auto r = RunOneNode(op, {Act("x", {1, 2048, 7, 7})});
    ASSERT_TRUE(r.Ok()) << op;
    EXPECT_EQ(r.out(), (Shape{1, 2048, 1, 1})) << op;
    ExpectNoWork(r);
    auto r3 = RunOneNode(op, {Act("x", {2, 8, 2, 3, 4})});
    ASSERT_TRUE(r3.Ok()) << op;
    EXPECT_EQ(r3.out(), (Shape{2, 8, 1, 1, 1})) << op;
    auto r1 = RunOneNode(op, {Act("x", {1, 8, 5})});
    ASSERT_TRUE(r1.Ok()) << op;
    EXPECT_EQ(r1.out(), (Shape{1, 8, 1})) << op;
  }
}

TEST(PoolTest, GlobalPoolRejectsInputWithoutSpatialAxes) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    auto r = RunOneNode(op, {Act("x", {1, 2048})}, {}, 1, "gap_flat");
    EXPECT_TRUE(r.FailsNamingNode()) << op;
  }
}

TEST(PoolTest, RejectsMissingKernelShape) {
  for (const char* op : {"MaxPool", "AveragePool"}) {
    auto r = RunOneNode(op, {Act("x", {1, 8, 8, 8})},
                        MakeAttrs({{"strides", Ints{2, 2}}}), 1, "pool_nok");
    EXPECT_TRUE(r.FailsNamingNode()) << op;
  }
}

TEST(PoolTest, RejectsPaddingNotSmallerThanKernel) {
  auto r = RunOneNode(
      "MaxPool", {Act("x", {1, 8, 8, 8})},
      MakeAttrs({{"kernel_shape", Ints{2, 2}}, {"pads", Ints{0, 0, 2, 0}}}), 1,
      "pool_bigpad");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(PoolTest, RejectsKernelRankMismatch) {
  auto r =
      RunOneNode("AveragePool", {Act("x", {1, 8, 8, 8})},
                 MakeAttrs({{"kernel_shape", Ints{2, 2, 2}}}), 1, "pool_rank");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(PoolTest, RejectsBadInputRank) {
  auto r = RunOneNode("MaxPool", {Act("x", {1, 8})},
                      MakeAttrs({{"kernel_shape", Ints{2}}}), 1, "pool_flat");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(PoolTest, RejectsKernelLargerThanInput) {
  auto r =
      RunOneNode("MaxPool", {Act("x", {1, 8, 2, 2})},
                 MakeAttrs({{"kernel_shape", Ints{3, 3}}}), 1, "pool_too_big");
  EXPECT_TRUE(r.FailsNamingNode());
}

TEST(PoolTest, RejectsStorageOrderAsUnsupported) {
  auto r = RunOneNode(
      "MaxPool", {Act("x", {1, 8, 8, 8})},
      MakeAttrs({{"kernel_shape", Ints{2, 2}}, {"storage_order", 1}}), 1,
      "pool_storage");
  EXPECT_TRUE(r.FailsNamingNode());
  EXPECT_EQ(r.infer.code(), Code::kUnsupported);
}

}  // namespace
}  // namespace shoal
