// QuantizeLinear / DequantizeLinear registrations: shapes, per-axis checks,
// and malformed parameters refused with the node named.
#include <gtest/gtest.h>

#include <limits>

#include "graph/op_registry.h"
#include "ops/op_test_util.h"

namespace shoal {
namespace {

using op_test::Act;
using op_test::MakeAttrs;
using op_test::RunOneNode;
using op_test::Wt;
using Floats = std::vector<float>;
using Ints = std::vector<int64_t>;

TEST(QuantizeOpTest, KeepsShapeWithoutCost) {
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
    auto r = RunOneNode(
        op, {Act("x", {1, 8, 5, 5})},
        MakeAttrs({{"scale", Floats{0.1f}}, {"zero_point", Ints{-3}}}));
    ASSERT_TRUE(r.Ok()) << op;
    EXPECT_EQ(r.out(), (Shape{1, 8, 5, 5}));
    EXPECT_EQ(r.cost().macs, 0);
    EXPECT_TRUE(SplitFactsOf(op).any_axis) << op;
  }
}

TEST(QuantizeOpTest, PerAxisOnAWeight) {
  auto r = RunOneNode("DequantizeLinear", {Wt("w", {4, 3, 3, 3})},
                      MakeAttrs({{"scale", Floats{0.1f, 0.2f, 0.3f, 0.4f}},
                                 {"zero_point", Ints{0, 0, 0, 0}},
                                 {"axis", int64_t{0}}}));
  EXPECT_TRUE(r.Ok());
  // Negative axes count from the end.
  auto neg = RunOneNode(
      "DequantizeLinear", {Wt("w", {4, 3})},
      MakeAttrs({{"scale", Floats{0.1f, 0.2f, 0.3f}}, {"axis", int64_t{-1}}}));
  EXPECT_TRUE(neg.Ok());
}

TEST(QuantizeOpTest, MalformedParametersNameTheNode) {
  const Shape x = {2, 4};
  const std::vector<Attrs> bad = {
      {},                                    // no scale
      MakeAttrs({{"scale", Floats{0.f}}}),   // zero scale
      MakeAttrs({{"scale", Floats{-1.f}}}),  // negative scale
      MakeAttrs({{"scale", Floats{std::numeric_limits<float>::infinity()}}}),
      MakeAttrs({{"scale", Floats{0.1f}}, {"zero_point", Ints{128}}}),
      MakeAttrs({{"scale", Floats{0.1f}}, {"zero_point", Ints{-129}}}),
      MakeAttrs({{"scale", Floats{0.1f}}, {"zero_point", Ints{0, 0}}}),
      // 3 scales along axis 1 of extent 4; axis 2 out of range.
      MakeAttrs({{"scale", Floats{1, 1, 1}}, {"axis", int64_t{1}}}),
      MakeAttrs({{"scale", Floats{1, 1, 1, 1}}, {"axis", int64_t{2}}}),
  };
  for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) {
    for (size_t i = 0; i < bad.size(); ++i) {
      auto r = RunOneNode(op, {Act("x", x)}, bad[i]);
      EXPECT_TRUE(r.FailsNamingNode()) << op << " case " << i;
    }
  }
}

}  // namespace
}  // namespace shoal
