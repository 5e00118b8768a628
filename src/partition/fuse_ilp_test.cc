#include "partition/fuse_ilp.h"

#include <gtest/gtest.h>

#include "partition/chain_dp.h"
#include "partition/chain_examples.h"
#include "partition/split_counts.h"

namespace shoal {
namespace {

using S = Scheme;

TEST(FuseIlpTest, PaperExampleOptimum) {  // Fig. 7
  auto choice = SolveFuseIlp(PaperFourLayerChain(), EqualShares(2));
  ASSERT_TRUE(choice.ok()) << choice.status().ToString();
  EXPECT_TRUE(choice->proven_optimal);
  EXPECT_EQ(choice->schemes,
            (std::vector<Scheme>{S::kLop, S::kFuse1, S::kFuse2, S::kLop}));
  EXPECT_EQ(choice->cost.communication, 22);
  EXPECT_EQ(choice->cost.weights_per_device, (std::vector<int64_t>{120, 120}));
  EXPECT_EQ(choice->cost.macs_longest_path, 120);
}

TEST(FuseIlpTest, RespectsUnfusableLayers) {
  auto chain = PaperFourLayerChain();
  chain[1].fusable_with_next = false;  // forbids the optimum's pair
  auto ilp = SolveFuseIlp(chain, EqualShares(2));
  auto dp = SolveFuseDp(chain, EqualShares(2));
  ASSERT_TRUE(ilp.ok()) << ilp.status().ToString();
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  EXPECT_NE(ilp->schemes[1], S::kFuse1);
  EXPECT_GT(ilp->cost.communication, 22);
  EXPECT_EQ(ilp->cost.communication, dp->cost.communication);
  // Nothing fusable: LOP everywhere (34) is best.
  for (auto& l : chain) l.fusable_with_next = false;
  ilp = SolveFuseIlp(chain, EqualShares(2));
  ASSERT_TRUE(ilp.ok());
  EXPECT_EQ(ilp->schemes,
            (std::vector<Scheme>{S::kLop, S::kLop, S::kLop, S::kLop}));
  EXPECT_EQ(ilp->cost.communication, 34);
}

TEST(FuseIlpTest, WholeOnlyWhenAllowed) {
  FuseOptions options;
  options.allow_whole = true;
  auto ilp = SolveFuseIlp(PaperFourLayerChain(), EqualShares(2), options);
  ASSERT_TRUE(ilp.ok()) << ilp.status().ToString();
  EXPECT_EQ(ilp->cost.communication, 0);
  // Five devices cannot split fc4's 4 inputs or its 4 outputs, so fc4 has
  // no scheme unless it may be kept whole.
  auto none = SolveFuseIlp(PaperFourLayerChain(), EqualShares(5));
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no scheme fits layer 3 'fc4'"),
            std::string::npos)
      << none.status().message();
  auto some = SolveFuseIlp(PaperFourLayerChain(), EqualShares(5), options);
  ASSERT_TRUE(some.ok()) << some.status().ToString();
  EXPECT_EQ(some->schemes[3], S::kWhole);
}

TEST(FuseIlpTest, UnequalSharesAndHubMatchDp) {
  for (int hub = 0; hub < 3; ++hub) {
    FuseOptions options;
    options.hub = hub;
    const std::vector<double> shares = {0.5, 0.3, 0.2};
    auto ilp = SolveFuseIlp(PaperFourLayerChain(), shares, options);
    auto dp = SolveFuseDp(PaperFourLayerChain(), shares, options);
    ASSERT_TRUE(ilp.ok()) << ilp.status().ToString();
    ASSERT_TRUE(dp.ok()) << dp.status().ToString();
    EXPECT_EQ(ilp->cost.communication, dp->cost.communication) << hub;
  }
}

TEST(FuseIlpTest, BadOptions) {
  FuseOptions options;
  options.time_limit_s = 0;
  EXPECT_FALSE(
      SolveFuseIlp(PaperFourLayerChain(), EqualShares(2), options).ok());
  options = {};
  options.hub = 2;
  EXPECT_FALSE(
      SolveFuseIlp(PaperFourLayerChain(), EqualShares(2), options).ok());
  EXPECT_FALSE(SolveFuseIlp({}, EqualShares(2)).ok());
}

}  // namespace
}  // namespace shoal
