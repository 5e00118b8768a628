// The fully-distributed paper's Table 2: YOLOv2 (608x608, COCO) on six
// devices. Layer numbers are darknet's, 0-based, counting maxpool, route and
// reorg layers; docs/fuse-ilp.md explains the reading.
#include <gtest/gtest.h>

#include <map>

#include "graph/graph.h"
#include "models/load_model.h"
#include "partition/chain_dp.h"
#include "partition/fuse_ilp.h"
#include "partition/paper_cost.h"
#include "partition/split_counts.h"

namespace shoal {
namespace {

using S = Scheme;

// The weight layers after DeepThings' fused early layers (0-15) that the
// paper partitions: 16, the passthrough's 26, then 18-24, 29 and 30. 26 comes
// right after 16 (it reads 16's output) so that 29, which reads a concat of
// 26's reorg and 24, follows 24 in the chain and reuses its part.
std::vector<ChainLayer> YoloChain(const Graph& g) {
  const int layers[] = {16, 26, 18, 19, 20, 21, 22, 23, 24, 29, 30};
  std::vector<ChainLayer> chain;
  for (int l : layers) {
    const std::string idx = std::to_string(l);
    const Node* n = g.FindNode("module_list." + idx + ".conv_" + idx);
    EXPECT_NE(n, nullptr) << l;
    if (n == nullptr) return {};
    const Shape& in = g.FindTensor(n->inputs[0])->shape;
    const Shape& out = g.FindTensor(n->outputs[0])->shape;
    const Shape& w = g.FindTensor(n->inputs[1])->shape;
    ChainLayer c;
    c.name = idx;
    c.M = NumElements(in);
    c.K = NumElements(out);
    c.Q = NumElements(w);
    c.R = c.Q * out[2] * out[3];
    c.m_units = in[1];
    c.k_units = out[1];
    c.reuses_prev = l == 26 || (l >= 19 && l <= 24) || l == 29 || l == 30;
    c.fusable_with_next = (l >= 18 && l <= 23) || l == 29;
    chain.push_back(c);
  }
  chain[9].reuse_elements = chain[8].K;  // 29 reads [reorg(26), 24]
  return chain;
}

std::vector<Scheme> Fused(const std::vector<ChainLayer>& chain,
                          const std::vector<std::pair<int, int>>& pairs) {
  std::vector<Scheme> s(chain.size(), S::kLop);
  for (size_t i = 0; i < chain.size(); ++i) {
    for (auto [a, b] : pairs) {
      if (chain[i].name == std::to_string(a)) s[i] = S::kFuse1;
      if (chain[i].name == std::to_string(b)) s[i] = S::kFuse2;
    }
  }
  return s;
}

double Megabytes(int64_t elements) { return elements * 4 / 1e6; }

class FuseYolov2Test : public ::testing::Test {
 protected:
  void SetUp() override {
    LoadOptions lo;
    lo.input_shape = Shape{1, 3, 608, 608};  // the paper's (DeepThings') size
    auto model = LoadModel("yolov2", lo);
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    chain_ = YoloChain(model->graph);
    ASSERT_EQ(chain_.size(), 11u);
  }
  double VariantMb(const std::vector<std::pair<int, int>>& pairs) {
    auto c = EvaluateChain(chain_, Fused(chain_, pairs), EqualShares(6));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    return c.ok() ? Megabytes(c->communication) : 0;
  }
  std::vector<ChainLayer> chain_;
};

TEST_F(FuseYolov2Test, PaperTable2) {
  // The three fused variants match the paper to its 0.1 MB.
  EXPECT_NEAR(VariantMb({{18, 19}, {20, 21}, {22, 23}, {29, 30}}), 68.1, 0.05);
  EXPECT_NEAR(VariantMb({{18, 19}, {20, 21}, {23, 24}, {29, 30}}), 68.1, 0.05);
  EXPECT_NEAR(VariantMb({{18, 19}, {21, 22}, {23, 24}, {29, 30}}), 75.5, 0.05);
  // The paper's LOP 78.1 and FUSE4 82.2 are not reproduced (80.3, 82.85):
  // no size-only reading fits all five rows, and its savings column does
  // not follow from its C column (docs/fuse-ilp.md).
  EXPECT_NEAR(VariantMb({}), 80.295, 0.001);
  EXPECT_NEAR(VariantMb({{19, 20}, {21, 22}, {23, 24}, {29, 30}}), 82.852,
              0.001);
}

TEST_F(FuseYolov2Test, IlpChoosesThePapersFuse1) {
  // Over the layers of the paper's Fig. 9 (18-24, 29, 30) the optimum is
  // FUSE1 or, tied with it as in the paper, FUSE2.
  std::vector<ChainLayer> tail(chain_.begin() + 2, chain_.end());
  tail[0].reuses_prev = false;
  auto ilp = SolveFuseIlp(tail, EqualShares(6));
  ASSERT_TRUE(ilp.ok()) << ilp.status().ToString();
  const std::vector<Scheme> fuse1 = {S::kFuse1, S::kFuse2, S::kFuse1,
                                     S::kFuse2, S::kFuse1, S::kFuse2,
                                     S::kLop,   S::kFuse1, S::kFuse2};
  const std::vector<Scheme> fuse2 = {S::kFuse1, S::kFuse2, S::kFuse1,
                                     S::kFuse2, S::kLop,   S::kFuse1,
                                     S::kFuse2, S::kFuse1, S::kFuse2};
  EXPECT_TRUE(ilp->schemes == fuse1 || ilp->schemes == fuse2);
  for (const auto& schemes : {fuse1, fuse2}) {
    auto c = EvaluateChain(tail, schemes, EqualShares(6));
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->communication, ilp->cost.communication);
  }
  // With 16 and 26 in the chain too, LIP on 26 (a 1x1 conv from 512 to 64
  // channels: its input is 8x its output) saves another 8.3 MB.
  ilp = SolveFuseIlp(chain_, EqualShares(6));
  ASSERT_TRUE(ilp.ok()) << ilp.status().ToString();
  EXPECT_EQ(ilp->schemes[1], S::kLip);
  EXPECT_NEAR(Megabytes(ilp->cost.communication), 59.743, 0.001);
  auto dp = SolveFuseDp(chain_, EqualShares(6));
  ASSERT_TRUE(dp.ok());
  EXPECT_EQ(dp->cost.communication, ilp->cost.communication);
}

}  // namespace
}  // namespace shoal
