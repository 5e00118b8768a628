#include "partition/fuse_choice.h"

#include <string>

namespace shoal {

StatusOr<std::vector<std::array<bool, 5>>> AllowedSchemes(
    const std::vector<ChainLayer>& chain, const std::vector<LayerParts>& parts,
    const FuseOptions& options) {
  const size_t n = chain.size();
  std::vector<std::array<bool, 5>> allowed(n);
  auto fits = [&](size_t i, Scheme s) {
    return CheckSchemeFits(chain[i], parts[i], s).ok();
  };
  for (size_t i = 0; i < n; ++i) {
    const bool pair_here = chain[i].fusable_with_next && i + 1 < n &&
                           fits(i, Scheme::kFuse1) &&
                           fits(i + 1, Scheme::kFuse2);
    const bool pair_before = i > 0 && chain[i - 1].fusable_with_next &&
                             fits(i - 1, Scheme::kFuse1) &&
                             fits(i, Scheme::kFuse2);
    allowed[i] = {fits(i, Scheme::kLop), pair_here, pair_before,
                  fits(i, Scheme::kLip), options.allow_whole};
    bool any = false;
    for (bool a : allowed[i]) any = any || a;
    if (!any) {
      return InvalidArgument("no scheme fits layer " + std::to_string(i) +
                             " '" + chain[i].name + "' (" +
                             parts[i].k_status.message() + "; " +
                             parts[i].m_status.message() +
                             ") and keeping it whole is not allowed");
    }
  }
  return allowed;
}

}  // namespace shoal
