#include "partition/chain_dp.h"

#include <limits>

namespace shoal {

StatusOr<FuseChoice> SolveFuseDp(const std::vector<ChainLayer>& chain,
                                 const std::vector<double>& shares,
                                 const FuseOptions& options) {
  ASSIGN_OR_RETURN(std::vector<LayerParts> parts, SplitChain(chain, shares));
  RETURN_IF_ERROR(ValidateHub(options.hub, shares));
  ASSIGN_OR_RETURN(auto allowed, AllowedSchemes(chain, parts, options));
  constexpr int kC = static_cast<int>(kFuseCandidates.size());
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max();
  const size_t n = chain.size();
  // best[i][c]: least C of layers 0..i with layer i under candidate c.
  std::vector<std::array<int64_t, kC>> best(n);
  std::vector<std::array<int, kC>> from(n);
  for (size_t i = 0; i < n; ++i) {
    for (int c = 0; c < kC; ++c) {
      best[i][c] = kInf;
      from[i][c] = -1;
      const Scheme s = kFuseCandidates[c];
      if (!allowed[i][c]) continue;
      const int64_t base =
          BaseCommunication(chain[i], parts[i], s, options.hub);
      if (i == 0) {
        if (s != Scheme::kFuse2) best[i][c] = base;
        continue;
      }
      const int64_t reusable =
          ReusableElements(chain[i], chain[i - 1], parts[i - 1], options.hub);
      for (int p = 0; p < kC; ++p) {
        const Scheme ps = kFuseCandidates[p];
        if (best[i - 1][p] == kInf) continue;
        // A fused pair is exactly fuse1 then fuse2.
        if ((ps == Scheme::kFuse1) != (s == Scheme::kFuse2)) continue;
        const int64_t total =
            best[i - 1][p] + base - (Reuses(ps, s) ? reusable : 0);
        if (total < best[i][c]) {
          best[i][c] = total;
          from[i][c] = p;
        }
      }
    }
  }
  int last = -1;
  for (int c = 0; c < kC; ++c) {
    if (kFuseCandidates[c] == Scheme::kFuse1 || best[n - 1][c] == kInf) {
      continue;
    }
    if (last < 0 || best[n - 1][c] < best[n - 1][last]) last = c;
  }
  if (last < 0) return Internal("chain DP found no feasible choice");
  FuseChoice choice;
  choice.schemes.resize(n);
  for (size_t i = n; i-- > 0;) {
    choice.schemes[i] = kFuseCandidates[last];
    last = from[i][last];
  }
  ASSIGN_OR_RETURN(choice.cost,
                   EvaluateChain(chain, choice.schemes, shares, options.hub));
  return choice;
}

}  // namespace shoal
