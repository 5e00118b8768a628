// The chain DP against the paper's example and, as the test of the ILP,
// against the ILP on random chains.
#include "partition/chain_dp.h"

#include <gtest/gtest.h>

#include <random>

#include "partition/chain_examples.h"
#include "partition/fuse_ilp.h"
#include "partition/split_counts.h"

namespace shoal {
namespace {

using S = Scheme;

TEST(ChainDpTest, PaperExampleOptimum) {
  auto dp = SolveFuseDp(PaperFourLayerChain(), EqualShares(2));
  ASSERT_TRUE(dp.ok()) << dp.status().ToString();
  EXPECT_EQ(dp->schemes,
            (std::vector<Scheme>{S::kLop, S::kFuse1, S::kFuse2, S::kLop}));
  EXPECT_EQ(dp->cost.communication, 22);
}

TEST(ChainDpTest, MatchesIlpOnRandomChains) {
  std::mt19937 rng(20190325);
  int solved = 0, infeasible = 0, fused = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const auto chain = RandomChain(rng);
    const int devices = 2 + rng() % 7;
    const auto shares = RandomShares(rng, devices);
    FuseOptions options;
    options.hub = rng() % devices;
    options.allow_whole = rng() % 4 == 0;
    auto dp = SolveFuseDp(chain, shares, options);
    auto ilp = SolveFuseIlp(chain, shares, options);
    ASSERT_EQ(dp.ok(), ilp.ok()) << trial << ": " << dp.status().ToString()
                                 << " / " << ilp.status().ToString();
    if (!dp.ok()) {
      ++infeasible;
      continue;
    }
    ++solved;
    ASSERT_TRUE(ilp->proven_optimal) << trial;
    ASSERT_EQ(dp->cost.communication, ilp->cost.communication)
        << "trial " << trial;
    for (S s : ilp->schemes) fused += s == S::kFuse1;
    // No single-layer change beats the optimum.
    for (size_t l = 0; l < chain.size(); ++l) {
      for (S s : {S::kLop, S::kLip}) {
        auto schemes = dp->schemes;
        if (schemes[l] == S::kFuse1 || schemes[l] == S::kFuse2) continue;
        schemes[l] = s;
        auto c = EvaluateChain(chain, schemes, shares, options.hub);
        if (c.ok()) {
          EXPECT_GE(c->communication, dp->cost.communication);
        }
      }
    }
  }
  // The generator must exercise both outcomes and real fusion decisions.
  EXPECT_GT(solved, 150);
  EXPECT_GT(infeasible, 0);
  EXPECT_GT(fused, 50);
}

}  // namespace
}  // namespace shoal
