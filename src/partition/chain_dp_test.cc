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

// Layers of 1 to 64 units (channels) of 1 to 16 elements each, so that some
// have fewer units than devices and lose their split schemes. A layer reads
// the previous one's channels as they are, pooled (fewer elements per
// channel), joined with extra channels (a concat), or not at all.
std::vector<ChainLayer> RandomChain(std::mt19937& rng) {
  const int n = 1 + rng() % 12;
  std::vector<ChainLayer> chain(n);
  int64_t units = 1 + rng() % 64, unit = 1 + rng() % 16;
  for (int l = 0; l < n; ++l) {
    ChainLayer& c = chain[l];
    c.name = std::string("l") + std::to_string(l);
    c.reuses_prev = l > 0 && rng() % 4 != 0;
    if (!c.reuses_prev || rng() % 3 == 0) unit = 1 + rng() % 16;
    c.m_units = units;
    c.M = units * unit;
    if (c.reuses_prev && rng() % 5 == 0) {
      const int64_t extra = 1 + rng() % 8;
      c.reuse_elements = c.M;
      c.m_units += extra;
      c.M += extra * unit;
    }
    c.k_units = 1 + rng() % 64;
    if (rng() % 3 == 0) unit = 1 + rng() % 16;
    c.K = c.k_units * unit;
    c.Q = c.m_units * c.k_units * (1 + rng() % 9);
    c.R = c.Q * unit;
    c.fusable_with_next = rng() % 3 != 0;
    units = c.k_units;
  }
  return chain;
}

std::vector<double> RandomShares(std::mt19937& rng, int n) {
  std::vector<double> shares(n);
  double sum = 0;
  for (double& s : shares) sum += s = 1 + rng() % 100;
  for (double& s : shares) s /= sum;
  return shares;
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
