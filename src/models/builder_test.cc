#include "models/builder.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

const Node& Last(const Graph& g) { return g.nodes.back(); }

TEST(GraphBuilderTest, PadsExpandOrPassThroughAsOnnxPads) {
  struct Case {
    std::vector<int64_t> pad, pads;
    int64_t out_h, out_w;
  };
  // One value: every side; one per axis: both sides of it; 2 x rank: ONNX's
  // [begins..., ends...] as given (TensorFlow's SAME at stride 2).
  const Case cases[] = {{{1}, {1, 1, 1, 1}, 5, 5},
                        {{1, 0}, {1, 0, 1, 0}, 5, 3},
                        {{0, 0, 1, 1}, {0, 0, 1, 1}, 4, 4}};
  for (const auto& c : cases) {
    GraphBuilder b("t");
    auto x = b.Input("x", {1, 2, 5, 5});
    GraphBuilder::ConvOpts o;
    o.pad = c.pad;
    auto y = b.Conv("conv", x, 4, std::vector<int64_t>{3}, o);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_EQ(Last(*g).attrs.GetInts("pads"), c.pads);
    EXPECT_EQ(g->FindTensor(y)->shape, (Shape{1, 4, c.out_h, c.out_w}));

    GraphBuilder p("t");
    auto px =
        p.MaxPool(p.Input("x", {1, 2, 5, 5}), {3}, {1}, c.pad, false, "pool");
    auto pg = p.Finish({px});
    ASSERT_TRUE(pg.ok()) << pg.status().ToString();
    EXPECT_EQ(Last(*pg).name, "pool");
    EXPECT_EQ(Last(*pg).attrs.GetInts("pads"), c.pads);
    EXPECT_EQ(pg->FindTensor(px)->shape, (Shape{1, 2, c.out_h, c.out_w}));
  }
}

TEST(GraphBuilderTest, FirstErrorIsReportedByFinish) {
  GraphBuilder b("t");
  auto x = b.Input("x", {1, 3, 8, 8});
  x = b.Conv("conv", x, 4, 3, 1, 0, /*group=*/2);  // 3 channels, 2 groups
  x = b.Relu(x);
  auto g = b.Finish({x});
  EXPECT_FALSE(g.ok());
}

}  // namespace
}  // namespace shoal
