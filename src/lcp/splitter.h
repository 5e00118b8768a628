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
  int64_t params_per_branch = 0, macs_per_branch = 0;
  // Weights plus peak live activations of one branch (the whole model
  // when there is one branch): what one device must hold.
  int64_t branch_memory_bytes = 0;
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

}  // namespace shoal

#endif  // SHOAL_LCP_SPLITTER_H_
