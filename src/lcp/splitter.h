// The paper's Splitter (Procedure 1): divide every layer's width by the
// division factor until one branch fits the device's memory and MAC budget;
// and the counts that describe an LCP model.
#ifndef SHOAL_LCP_SPLITTER_H_
#define SHOAL_LCP_SPLITTER_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct LcpSummary {
  std::string model;  // the original model's name
  int64_t branches = 1;
  double fatten_pct = 0;
  int64_t params = 0, macs = 0;  // whole branched model
  // Of the largest branch (they are equal unless split by shares).
  int64_t params_per_branch = 0, macs_per_branch = 0;
  // Weights plus peak live activations of one branch (the whole model
  // when there is one branch): what one device must hold; the largest.
  int64_t branch_memory_bytes = 0;
  // Each branch's MACs and memory, in branch order.
  std::vector<int64_t> branch_macs, branch_memory, branch_weight_bytes;
  std::vector<double> shares;  // as split; empty: equal branches
  int64_t original_params = 0, original_macs = 0;
  // The input sent to every branch plus every branch's pre-final activation.
  int64_t communication_elements = 0;
};

StatusOr<LcpSummary> SummarizeSplit(const Graph& original,
                                    const Graph& branched, int64_t branches,
                                    double fatten_pct);

struct SplitterBudget {
  int64_t device_memory_bytes = 0;
  int64_t device_macs = 0;
  int64_t division_factor = 2;
  double fatten_pct = 0;
};

struct SplitterResult {
  Graph graph;
  LcpSummary summary;
  std::vector<std::string> steps;  // one line per branch count tried
};

// Tries K = 1, D, D^2, ... and returns the first K whose branch fits both
// budgets; fails with the numbers when K would exceed the pre-final width.
StatusOr<SplitterResult> RunSplitter(const Graph& g, const SplitterBudget& b);

// A device the cluster Splitter sizes a branch for.
struct SplitDevice {
  std::string name;
  double speed = 1;          // relative: branch widths follow it
  int64_t memory_bytes = 0;  // 0: unlimited
};

struct ClusterSplitOptions {
  int64_t division_factor = 2;
  double fatten_pct = 0;
  // > 0: the fewest branches whose slowest is predicted within this
  // (the paper's rule: fewer branches keep more accuracy); 0: the most
  // branches that fit, which is the fastest.
  double target_ms = 0;
  // A device of speed s runs a branch in macs / (s x macs_per_second) +
  // weight bytes / (s x weight_bytes_per_second) (sim/latency_model.h).
  double macs_per_second = 0, weight_bytes_per_second = 0;
};

struct ClusterSplitResult {
  SplitterResult split;
  // Branch k is sized for devices[k]: the K fastest, fastest first.
  std::vector<std::string> devices;
  std::vector<double> predicted_ms;  // per branch on its device
};

// The Splitter driven by a cluster: K = 1, D, D^2, ... below the number of
// devices, then the number of devices itself; branch k sized for the k-th
// fastest device (widths in proportion to the speeds, so unequal devices get
// unequal branches), each branch checked against its device's memory and, with
// a target, the predicted time. Fails with every step's numbers when no K fits.
StatusOr<ClusterSplitResult> RunClusterSplitter(
    const Graph& g, const std::vector<SplitDevice>& devices,
    const ClusterSplitOptions& o);

}  // namespace shoal

#endif  // SHOAL_LCP_SPLITTER_H_
