// What `plan`, `cost` and `run` share: loading the model a plan is about and
// reading the devices from --devices / --cluster / --shares.
#ifndef SHOAL_CLI_PLAN_COMMON_H_
#define SHOAL_CLI_PLAN_COMMON_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "graph/weights.h"
#include "io/image.h"
#include "lcp/splitter.h"
#include "partition/plan_model.h"
#include "plan/plan.h"

namespace shoal {

struct DeviceFlags {
  int devices = 0;
  std::string cluster;
  std::string shares;  // "1,2,1": relative speeds for --devices
  void Add(CLI::App* cmd);
  StatusOr<std::vector<PlanDevice>> Resolve() const;
  // The cluster the devices come from: the file, or N equal devices (with
  // --shares as their speeds) on free links.
  StatusOr<Cluster> ResolveCluster() const;
};

// Whether a device's link is below 1 Gbit/s (Wi-Fi, a shaped emulation):
// there LZ4, which compresses at a few hundred MB/s even on a Pi 3, costs
// less time than the bytes it saves; `--wire-compression auto` uses it
// then. Unshaped links (loopback, --devices N) are left alone.
bool HasSlowLink(const Cluster& c);

// The LCP Splitter for a cluster's devices (lcp/splitter.h), their speeds
// and memory, at the spec rates of sim/latency_model.h; `shoal lcp split
// --cluster` and `shoal plan --strategy lcp` without --branches.
StatusOr<ClusterSplitResult> SplitForCluster(const Graph& g, const Cluster& c,
                                             double target_ms,
                                             double fatten_pct = 0,
                                             int64_t division_factor = 2);
// One line: which branches were sized for which devices, and why.
std::string ClusterSplitReason(const ClusterSplitResult& r);

// A seeded input for plan `p`: a random image when its input is pixels
// (Plan::input_pixels; `pixels` then gets the normalisation, for
// CoordinatorOptions::pixels), random floats otherwise.
Tensor RandomPlanInput(const Plan& p, uint64_t seed,
                       std::optional<ImageNormalization>* pixels);

}  // namespace shoal

#endif  // SHOAL_CLI_PLAN_COMMON_H_
