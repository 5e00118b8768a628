// The LCP Splitter (lcp/splitter.h) for a cluster's devices: `shoal lcp
// split --cluster` and `shoal plan --strategy lcp` without --branches. It
// lives here, not in lcp/, because it reads the cluster and the latency
// model's device rates, which lcp does not build on.
#ifndef SHOAL_PLANNER_CLUSTER_SPLIT_H_
#define SHOAL_PLANNER_CLUSTER_SPLIT_H_

#include <cstdint>
#include <string>

#include "cluster/cluster.h"
#include "graph/graph.h"
#include "lcp/splitter.h"
#include "util/status.h"

namespace shoal {

// Branches sized for the devices of `c`, their speeds and memory, at the
// spec rates of sim/latency_model.h.
StatusOr<ClusterSplitResult> SplitForCluster(const Graph& g, const Cluster& c,
                                             double target_ms,
                                             double fatten_pct = 0,
                                             int64_t division_factor = 2);
// One line: which branches were sized for which devices, and why.
std::string ClusterSplitReason(const ClusterSplitResult& r);

}  // namespace shoal

#endif  // SHOAL_PLANNER_CLUSTER_SPLIT_H_
