// What the fusion search (the ILP of the fully-distributed paper's §4.3 and
// the chain DP that checks it) is asked and answers, and the schemes each
// layer may take.
#ifndef SHOAL_PARTITION_FUSE_CHOICE_H_
#define SHOAL_PARTITION_FUSE_CHOICE_H_

#include <array>
#include <vector>

#include "partition/chain.h"
#include "partition/paper_cost.h"
#include "partition/scheme.h"
#include "plan/broadcast.h"
#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

// What the fusion ILP minimises: the link time, each layer's busiest device
// uplink summed over the layers, under the way shoal's plans move data
// (partition/link_load.h), or the papers' total communication C
// (partition/paper_cost.h).
enum class FuseObjective { kLinkTime, kBytes };

struct FuseOptions {
  // Also consider running a layer whole on the hub. Off by default: with it,
  // the communication optimum is to run everything on the hub.
  bool allow_whole = false;
  double time_limit_s = 10;  // the ILP's; the DP needs none
  int hub = 0;
  // The papers' by default here; `shoal plan --strategy fuse-ilp` asks
  // for the busiest link unless told --fuse-objective bytes.
  FuseObjective objective = FuseObjective::kBytes;
  // Per device, the rate of its uplink in bits per second (<= 0
  // unlimited). Empty: links not known, all alike.
  std::vector<double> link_rates;
  // A message's latency: each exchange a layer waits for costs it.
  double link_latency_s = 0;
  // How the plan's broadcasts travel (plan/broadcast.h), which decides who
  // sends what every device reads.
  BroadcastSettings broadcast{kDefaultBroadcastFanout,
                              kDefaultBroadcastChunkBytes, false};
};

struct FuseChoice {
  std::vector<Scheme> schemes;  // one per layer
  ChainCost cost;               // EvaluateChain of `schemes`
  double link_time = 0;         // ChainLinkTime of `schemes`
  bool proven_optimal = true;   // false: the ILP ran out of time first
};

// The schemes the search chooses from, in tie-break order.
inline constexpr std::array<Scheme, 5> kFuseCandidates = {
    Scheme::kLop, Scheme::kFuse1, Scheme::kFuse2, Scheme::kLip, Scheme::kWhole};

// allowed[i][c]: layer i may take kFuseCandidates[c]. fuse1 needs a fusable
// layer followed by one that can take fuse2 (and fuse2 the converse), so a
// pair is either possible on both layers or on neither. Fails, naming the
// layer and why, when a layer has no scheme left.
StatusOr<std::vector<std::array<bool, 5>>> AllowedSchemes(
    const std::vector<ChainLayer>& chain, const std::vector<LayerParts>& parts,
    const FuseOptions& options);

}  // namespace shoal

#endif  // SHOAL_PARTITION_FUSE_CHOICE_H_
