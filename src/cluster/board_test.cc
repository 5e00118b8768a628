#include "cluster/board.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

BoardRates TestRates() {
  // 3x3: 8 GMAC/s, other: 4, depthwise: 1; 2 GB/s; 0.1 ms a step.
  return BoardRates{8e9, 4e9, 1e9, 2e9, 1e-4};
}

NodeCost Node(const std::string& op, int64_t macs, MacKind kind,
              int64_t in_elems, int64_t out_elems, int64_t weight_elems) {
  NodeCost c;
  c.op = op;
  c.macs = macs;
  c.mac_kind = kind;
  c.input_elements = in_elems;
  c.output_elements = out_elems;
  c.weight_elements = weight_elems;
  return c;
}

TEST(BoardNodeSeconds, ConvolutionsAreBoundByTheirKernelsRate) {
  const BoardRates r = TestRates();
  // 8e8 MACs over 4 MB of traffic: arithmetic bound.
  const NodeCost w = Node("Conv", 800'000'000, MacKind::kWinograd3x3, 250'000,
                          250'000, 500'000);
  EXPECT_NEAR(BoardNodeSeconds(r, w), 1e-4 + 0.1, 1e-12);
  NodeCost g = w;
  g.mac_kind = MacKind::kGemm;
  EXPECT_NEAR(BoardNodeSeconds(r, g), 1e-4 + 0.2, 1e-12);
  NodeCost d = w;
  d.mac_kind = MacKind::kDepthwise;
  EXPECT_NEAR(BoardNodeSeconds(r, d), 1e-4 + 0.8, 1e-12);
}

TEST(BoardNodeSeconds, FullyConnectedIsBoundByReadingItsWeights) {
  // AlexNet's fc6: 9216 -> 4096, 37.7 M MACs, 151 MB of weights.
  const NodeCost fc = Node("Gemm", 9216LL * 4096, MacKind::kGemm, 9216, 4096,
                           9216LL * 4096 + 4096);
  const double bytes = 4.0 * (9216 + 4096 + 9216.0 * 4096 + 4096);
  EXPECT_NEAR(BoardNodeSeconds(TestRates(), fc), 1e-4 + bytes / 2e9, 1e-12);
}

TEST(BoardNodeSeconds, ViewsAreFreeAndElementwiseNodesPayNoStep) {
  const BoardRates r = TestRates();
  EXPECT_EQ(
      BoardNodeSeconds(r, Node("Flatten", 0, MacKind::kGemm, 1000, 1000, 0)),
      0);
  EXPECT_NEAR(
      BoardNodeSeconds(r, Node("Relu", 0, MacKind::kGemm, 1000, 1000, 0)),
      8000 / 2e9, 1e-15);
  EXPECT_NEAR(
      BoardNodeSeconds(r, Node("MaxPool", 0, MacKind::kGemm, 4000, 1000, 0)),
      1e-4 + 20000 / 2e9, 1e-15);
}

TEST(BoardClasses, EveryClassIsComplete) {
  for (const BoardClass& b : BoardClasses()) {
    SCOPED_TRACE(b.name);
    EXPECT_EQ(FindBoard(b.name), &b);
    EXPECT_GE(b.cores, 1);
    EXPECT_GT(b.memory_bytes, 0);
    EXPECT_GT(b.link_bandwidth_bps, 0);
    EXPECT_GT(b.rates.gemm_macs_per_s, 0);
    EXPECT_GT(b.rates.memory_bytes_per_s, 0);
    EXPECT_FALSE(b.basis.empty());
    EXPECT_GT(b.power.busy_w, b.power.idle_w);
  }
  EXPECT_EQ(FindBoard("pi3"), nullptr);
  EXPECT_DOUBLE_EQ(RelativeSpeed(*FindBoard("pi3-lcp")), 1);
  EXPECT_GT(RelativeSpeed(*FindBoard("pi4b")),
            RelativeSpeed(*FindBoard("pi3b+")));
}

TEST(ScaleRates, SpeedMultipliesRatesAndShortensSteps) {
  const BoardRates r = ScaleRates(TestRates(), 2);
  EXPECT_DOUBLE_EQ(r.gemm_macs_per_s, 8e9);
  EXPECT_DOUBLE_EQ(r.memory_bytes_per_s, 4e9);
  EXPECT_DOUBLE_EQ(r.step_s, 5e-5);
}

}  // namespace
}  // namespace shoal
