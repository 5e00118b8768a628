#include "lcp/splitter.h"

#include <sstream>

#include "graph/cost.h"
#include "lcp/find_classifier.h"
#include "lcp/split_branches.h"

namespace shoal {

StatusOr<LcpSummary> SummarizeSplit(const Graph& original,
                                    const Graph& branched, int64_t branches,
                                    double fatten_pct) {
  LcpSummary s;
  s.model = original.name;
  s.branches = branches;
  s.fatten_pct = fatten_pct;
  ASSIGN_OR_RETURN(GraphCost orig, ComputeGraphCost(original));
  ASSIGN_OR_RETURN(GraphCost all, ComputeGraphCost(branched));
  s.original_params = orig.params;
  s.original_macs = orig.macs;
  s.params = all.params;
  s.macs = all.macs;
  ASSIGN_OR_RETURN(Graph b0, ExtractBranch(branched, 0));
  ASSIGN_OR_RETURN(GraphCost one, ComputeGraphCost(b0));
  s.params_per_branch = one.params;
  s.macs_per_branch = one.macs;
  s.branch_memory_bytes = branches == 1
                              ? all.weight_bytes() + all.peak_activation_bytes
                              : one.weight_bytes() + one.peak_activation_bytes;
  int64_t in = 0;
  for (const auto& t : branched.inputs)
    in += NumElements(branched.FindTensor(t)->shape);
  const int64_t pre = NumElements(branched.FindTensor(b0.outputs[0])->shape);
  s.communication_elements = branches * (in + pre);
  return s;
}

StatusOr<SplitterResult> RunSplitter(const Graph& g, const SplitterBudget& b) {
  if (b.division_factor < 2)
    return InvalidArgument("--division-factor must be at least 2, not " +
                           std::to_string(b.division_factor));
  if (b.device_memory_bytes <= 0 || b.device_macs <= 0)
    return InvalidArgument("--device-memory and --device-macs must be > 0");
  ASSIGN_OR_RETURN(ClassifierSite site, FindClassifier(g));
  const Shape& pre = g.FindTensor(site.prefinal)->shape;
  const int64_t pre_width = pre.size() > 1 ? pre[1] : 1;
  SplitterResult r;
  for (int64_t k = 1; k <= pre_width; k *= b.division_factor) {
    ASSIGN_OR_RETURN(Graph split, SplitIntoBranches(g, {k, b.fatten_pct}));
    ASSIGN_OR_RETURN(LcpSummary s, SummarizeSplit(g, split, k, b.fatten_pct));
    const bool mem_ok = s.branch_memory_bytes <= b.device_memory_bytes;
    const bool mac_ok = s.macs_per_branch <= b.device_macs;
    std::ostringstream line;
    line << "K=" << k << ": one branch needs " << s.branch_memory_bytes
         << " bytes (" << (mem_ok ? "fits" : "over") << " "
         << b.device_memory_bytes << ") and " << s.macs_per_branch << " MACs ("
         << (mac_ok ? "fits" : "over") << " " << b.device_macs << ")";
    r.steps.push_back(line.str());
    if (mem_ok && mac_ok) {
      r.graph = std::move(split);
      r.summary = s;
      return r;
    }
  }
  std::string why;
  for (const auto& s : r.steps) why += "\n  " + s;
  return InvalidArgument(
      "no branch count meets the budget of " +
      std::to_string(b.device_memory_bytes) + " bytes and " +
      std::to_string(b.device_macs) + " MACs per device: dividing by " +
      std::to_string(b.division_factor) + " past the pre-final width " +
      std::to_string(pre_width) + " is not possible;" + why);
}

}  // namespace shoal
