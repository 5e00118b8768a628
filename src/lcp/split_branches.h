// The LCP branch transform (the paper's Splitter body): every layer before
// the final classifier is copied into K independent branches whose widths
// (conv output channels, fc output features) are divided by K; each branch
// reads the full input; the branches' pre-final activations are concatenated
// and the classifier, at full output width, reads the concatenation.
#ifndef SHOAL_LCP_SPLIT_BRANCHES_H_
#define SHOAL_LCP_SPLIT_BRANCHES_H_

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct BranchOptions {
  BranchOptions() = default;
  // Without shares: equal branches, as most callers want.
  BranchOptions(int64_t branches, double fatten_pct,
                std::vector<double> shares = {})
      : branches(branches), fatten_pct(fatten_pct), shares(std::move(shares)) {}

  int64_t branches = 2;
  double fatten_pct = 0;  // widens every in-branch layer, not the classifier
  // Empty: equal branches, each 1/K of every layer. Otherwise one positive
  // number per branch: branch k takes shares[k] / sum of every layer's
  // width (at least one channel), so a device twice as fast gets a branch
  // twice as wide.
  std::vector<double> shares;
};

// Node and tensor names of branch k carry this prefix ("b3/conv1").
std::string BranchPrefix(int64_t k);
// The concat that gathers the branches' pre-final activations (absent when
// there is one branch) and its output.
inline constexpr char kLcpConcatNode[] = "lcp/concat";
inline constexpr char kLcpPrefinal[] = "lcp/prefinal";

// Returns the branched graph, shaped and verified. Errors (with the numbers)
// when K is larger than the pre-final layer's width, when there is no
// classifier to merge on, when a branch holds a layer LCP cannot resize, or
// when shares are not K positive numbers.
StatusOr<Graph> SplitIntoBranches(const Graph& g, const BranchOptions& o);

// Whether `g` is already branched (has nodes of branch 0).
bool HasLcpBranches(const Graph& g);

// The nodes of branch k alone, as a graph from the model's inputs to that
// branch's pre-final activation (for per-branch cost and memory).
StatusOr<Graph> ExtractBranch(const Graph& branched, int64_t k);

}  // namespace shoal

#endif  // SHOAL_LCP_SPLIT_BRANCHES_H_
