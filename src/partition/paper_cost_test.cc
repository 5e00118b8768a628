// The fully-distributed paper's 4-layer example (Figs. 1-7) with the numbers
// the paper states, then unequal shares worked out by hand.
#include "partition/paper_cost.h"

#include <gtest/gtest.h>

#include "partition/chain_examples.h"
#include "partition/split_counts.h"

namespace shoal {
namespace {

using S = Scheme;
using Ints = std::vector<int64_t>;

Ints PerLayerC(const ChainCost& c) {
  Ints out;
  for (const auto& l : c.layers) out.push_back(l.communication);
  return out;
}

ChainCost Eval(const std::vector<Scheme>& schemes,
               const std::vector<double>& shares) {
  auto c = EvaluateChain(PaperFourLayerChain(), schemes, shares);
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : ChainCost{};
}

TEST(PaperCostTest, SingleDevice) {  // eq. 6, Fig. 1
  ChainCost c = Eval({S::kLop, S::kLop, S::kLop, S::kLop}, {1.0});
  EXPECT_EQ(c.weights_per_device, Ints{240});
  EXPECT_EQ(c.macs_longest_path, 240);
  EXPECT_EQ(c.communication, 0);
  // Whole layers on the hub of two devices: the same, the other device idle.
  c = Eval({S::kWhole, S::kWhole, S::kWhole, S::kWhole}, EqualShares(2));
  EXPECT_EQ(c.weights_per_device, (Ints{240, 0}));
  EXPECT_EQ(c.macs_longest_path, 240);
  EXPECT_EQ(c.communication, 0);
}

TEST(PaperCostTest, LopEverywhere) {  // eq. 7, Fig. 4
  ChainCost c = Eval({S::kLop, S::kLop, S::kLop, S::kLop}, EqualShares(2));
  EXPECT_EQ(c.weights_per_device, (Ints{120, 120}));
  EXPECT_EQ(c.macs_longest_path, 120);
  // 4+4 | 4+8 | 8+2 | 2+2: after the first layer device 1 reuses its half.
  EXPECT_EQ(PerLayerC(c), (Ints{8, 12, 10, 4}));
  EXPECT_EQ(c.communication, 34);
  EXPECT_EQ(c.layers[1].weights, (Ints{64, 64}));
  EXPECT_EQ(c.layers[1].macs, (Ints{64, 64}));
}

TEST(PaperCostTest, LipEverywhere) {  // eq. 8
  ChainCost c = Eval({S::kLip, S::kLip, S::kLip, S::kLip}, EqualShares(2));
  EXPECT_EQ(PerLayerC(c), (Ints{10, 20, 12, 6}));
  EXPECT_EQ(c.communication, 48);
  EXPECT_EQ(c.weights_per_device, (Ints{120, 120}));
  EXPECT_EQ(c.macs_longest_path, 120);
}

TEST(PaperCostTest, FuseAtEveryOpportunity) {  // eq. 9, Fig. 6
  ChainCost c =
      Eval({S::kFuse1, S::kFuse2, S::kFuse1, S::kFuse2}, EqualShares(2));
  EXPECT_EQ(PerLayerC(c), (Ints{4, 16, 16, 4}));
  EXPECT_EQ(c.communication, 40);
  EXPECT_EQ(c.weights_per_device, (Ints{120, 120}));
  EXPECT_EQ(c.macs_longest_path, 120);
}

TEST(PaperCostTest, OptimisedFusion) {  // Fig. 7
  // Layer 2 is fuse1 after an LOP layer: device 1 keeps its half of layer
  // 1's output, so only 8 - 4 is sent. The paper's eq. 9 leaves this reuse
  // out, but its 22 needs it.
  ChainCost c = Eval({S::kLop, S::kFuse1, S::kFuse2, S::kLop}, EqualShares(2));
  EXPECT_EQ(PerLayerC(c), (Ints{8, 4, 4, 6}));
  EXPECT_EQ(c.communication, 22);
}

TEST(PaperCostTest, UnequalShares) {
  // Device 0 (hub) 3/4, device 1 1/4: splits 4 -> 3+1, 8 -> 6+2,
  // 16 -> 12+4. LOP: l1 4 + (8-6); l2 (8-2) + (16-12); l3 (16-4) + (4-3);
  // l4 (4-1) + (4-3).
  ChainCost c = Eval({S::kLop, S::kLop, S::kLop, S::kLop}, {0.75, 0.25});
  EXPECT_EQ(PerLayerC(c), (Ints{6, 10, 13, 4}));
  EXPECT_EQ(c.weights_per_device, (Ints{180, 60}));
  EXPECT_EQ(c.macs_longest_path, 180);
  // LIP: (M - M_hub) + K: 1+8, 2+16, 4+4, 1+4. fuse1 after LOP: 8 - 2.
  c = Eval({S::kLip, S::kLip, S::kLip, S::kLip}, {0.75, 0.25});
  EXPECT_EQ(PerLayerC(c), (Ints{9, 18, 8, 5}));
  c = Eval({S::kLop, S::kFuse1, S::kFuse2, S::kLop}, {0.75, 0.25});
  EXPECT_EQ(PerLayerC(c), (Ints{6, 6, 4, 5}));
  // The hub may be any device: with device 1 (1/4) as hub, LOP layer 1
  // gathers 8 - 2.
  auto hub1 = EvaluateChain(PaperFourLayerChain(),
                            {S::kLop, S::kLop, S::kLop, S::kLop}, {0.75, 0.25},
                            /*hub=*/1);
  ASSERT_TRUE(hub1.ok());
  EXPECT_EQ(PerLayerC(*hub1),
            (Ints{4 + 6, (8 - 6) + 12, (16 - 12) + 3, (4 - 3) + 3}));
}

TEST(PaperCostTest, UnitsAreSplitWhole) {
  // A conv-like layer: 3 channels of 10 elements in, 5 of 4 out, 3 devices.
  // Output units split 2+2+1, so the hub keeps 8 of 20 output elements.
  ChainLayer l{.name = "conv", .M = 30, .K = 20, .Q = 15, .R = 60};
  l.m_units = 3;
  l.k_units = 5;
  auto c = EvaluateChain({l}, {S::kLop}, EqualShares(3));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->communication, 30 * 2 + (20 - 8));
  EXPECT_EQ(c->weights_per_device, (Ints{6, 6, 3}));
  EXPECT_EQ(c->macs_longest_path, 24);
  c = EvaluateChain({l}, {S::kLip}, EqualShares(3));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->communication, (30 - 10) + 20 * 2);
  EXPECT_EQ(c->weights_per_device, (Ints{5, 5, 5}));
}

TEST(PaperCostTest, PartialReuseThroughConcat) {
  // The second layer reads a concat of the first layer's output (8) and 4
  // other elements: LOP device 1 holds 4 of the 12.
  ChainLayer a{.name = "a", .M = 4, .K = 8, .Q = 32, .R = 32};
  ChainLayer b{.name = "b", .M = 12, .K = 2, .Q = 24, .R = 24};
  b.reuses_prev = true;
  b.reuse_elements = 8;
  auto c = EvaluateChain({a, b}, {S::kLop, S::kLop}, EqualShares(2));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->layers[1].communication, (12 - 4) + 1);
}

TEST(PaperCostTest, ReuseThroughPooling) {
  // A conv with 4 output channels of 2x2, then a 2x2 pool, then an fc on
  // the 4 pooled values: device 1 computed channels 2-3 and pools them
  // itself, so of the fc's 4 inputs it needs only 2.
  ChainLayer conv{.name = "conv", .M = 16, .K = 16, .Q = 16, .R = 64};
  conv.m_units = conv.k_units = 4;
  ChainLayer fc{.name = "fc", .M = 4, .K = 3, .Q = 12, .R = 12};
  fc.reuses_prev = true;
  auto c = EvaluateChain({conv, fc}, {S::kLop, S::kLop}, EqualShares(2));
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->layers[1].communication, (4 - 2) + (3 - 2));
  fc.M = 6;  // 6 pooled values cannot come from 4 channels evenly
  fc.Q = fc.R = 18;
  c = EvaluateChain({conv, fc}, {S::kLop, S::kLop}, EqualShares(2));
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("reuses 6 of its 6 input elements from "
                                      "the 4 output units of 'conv'"),
            std::string::npos)
      << c.status().message();
}

TEST(PaperCostTest, Errors) {
  const auto chain = PaperFourLayerChain();
  const auto two = EqualShares(2);
  auto expect_error = [&](const std::vector<ChainLayer>& ch,
                          const std::vector<Scheme>& s,
                          const std::vector<double>& shares,
                          const std::string& needle, int hub = 0) {
    auto c = EvaluateChain(ch, s, shares, hub);
    ASSERT_FALSE(c.ok()) << needle;
    EXPECT_NE(c.status().message().find(needle), std::string::npos)
        << c.status().message();
  };
  expect_error(chain, {S::kLop, S::kLop, S::kLop}, two, "3 schemes");
  expect_error(chain, {S::kFuse2, S::kLop, S::kLop, S::kLop}, two,
               "layer 0 'fc1' is fuse2");
  expect_error(chain, {S::kLop, S::kFuse1, S::kLop, S::kLop}, two,
               "layer 1 'fc2' is fuse1");
  expect_error(chain, {S::kLop, S::kLop, S::kLop, S::kFuse1}, two,
               "layer 3 'fc4' is fuse1");
  expect_error(chain, {S::kLop, S::kChannel, S::kLop, S::kLop}, two,
               "scheme 'channel'");
  expect_error(chain, {S::kLop, S::kLop, S::kLop, S::kLop}, {0.5, 0.6},
               "sum to");
  expect_error(chain, {S::kLop, S::kLop, S::kLop, S::kLop}, two, "hub device",
               2);
  // Five devices cannot split fc3's 4 outputs, but may keep it whole.
  expect_error(chain, {S::kLop, S::kLop, S::kLop, S::kLop}, EqualShares(5),
               "layer 2 'fc3': cannot split its 4 output units among 5");
  EXPECT_TRUE(EvaluateChain(chain, {S::kLop, S::kLop, S::kWhole, S::kWhole},
                            EqualShares(5))
                  .ok());
  auto unfusable = chain;
  unfusable[1].fusable_with_next = false;
  expect_error(unfusable, {S::kLop, S::kFuse1, S::kFuse2, S::kLop}, two,
               "layer 1 'fc2' is fuse1 but is not fusable");
  auto bad = chain;
  bad[2].M = 0;
  expect_error(bad, {S::kLop, S::kLop, S::kLop, S::kLop}, two,
               "layer 2 'fc3' has M=0");
  bad = chain;
  bad[0].reuses_prev = true;
  expect_error(bad, {S::kLop, S::kLop, S::kLop, S::kLop}, two, "is the first");
  bad = chain;
  bad[2].reuse_elements = 20;  // more than its 16 inputs
  expect_error(bad, {S::kLop, S::kLop, S::kLop, S::kLop}, two,
               "reuses 20 of its 16 input elements");
  bad = chain;
  bad[1].k_units = 3;  // 16 is not a multiple of 3
  expect_error(bad, {S::kLop, S::kLop, S::kLop, S::kLop}, two,
               "not whole multiples");
}

}  // namespace
}  // namespace shoal
