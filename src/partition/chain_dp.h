// The exact minimum-communication choice of schemes for a chain by dynamic
// programming. A layer's cost depends only on its own scheme and the previous
// layer's (fusion pairs, reuse of an LOP output), so the state is the
// previous layer's scheme. It answers the same question as the ILP and is
// the ILP's test.
#ifndef SHOAL_PARTITION_CHAIN_DP_H_
#define SHOAL_PARTITION_CHAIN_DP_H_

#include <vector>

#include "partition/chain.h"
#include "partition/fuse_choice.h"
#include "util/status.h"

namespace shoal {

StatusOr<FuseChoice> SolveFuseDp(const std::vector<ChainLayer>& chain,
                                 const std::vector<double>& shares,
                                 const FuseOptions& options = {});

}  // namespace shoal

#endif  // SHOAL_PARTITION_CHAIN_DP_H_
