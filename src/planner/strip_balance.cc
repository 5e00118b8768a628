#include "planner/strip_balance.h"

namespace shoal {

StatusOr<StripBalance> BalanceStrips(
    const Graph& g, const PlanOptions& opts, double start,
    const std::function<StatusOr<double>(const Plan&)>& value,
    int max_evaluations) {
  ASSIGN_OR_RETURN(std::vector<StripRows> chains, SpatialStripRows(g, opts));
  StripBalance b;
  b.options = opts;
  b.value = start;
  for (const StripRows& c : chains) b.options.spatial_rows[c.chain] = c.rows;
  // A relative gain below this is the simulator's rounding, not a move.
  constexpr double kGain = 1e-4;
  // First improvement: a move that pays is taken at once, and the scan
  // goes on from the next boundary; it stops after a whole pass over every
  // boundary in which no move paid.
  int since_gain = 0, boundaries = 0;
  for (const StripRows& c : chains) boundaries += int(c.rows.size()) - 1;
  for (size_t ci = 0, k = 0; boundaries > 0 && since_gain < boundaries &&
                             b.evaluations < max_evaluations;) {
    if (k + 1 >= chains[ci].rows.size()) {
      ci = (ci + 1) % chains.size();
      k = 0;
      continue;
    }
    const std::string& chain = chains[ci].chain;
    bool gained = false;
    for (int dir : {-1, 1}) {
      // dir -1: strip k gives its last row to strip k + 1; +1: it takes
      // the first row of k + 1.
      std::vector<int64_t> moved = b.options.spatial_rows[chain];
      moved[k] += dir;
      moved[k + 1] -= dir;
      if (moved[k] < 1 || moved[k + 1] < 1) continue;
      if (b.evaluations >= max_evaluations) break;
      ++b.evaluations;
      PlanOptions o = b.options;
      o.spatial_rows[chain] = moved;
      auto p = MakePlan(g, o);
      if (!p.ok()) continue;
      auto v = value(*p);
      if (!v.ok() || *v >= b.value * (1 - kGain)) continue;
      b.options.spatial_rows[chain] = moved;
      b.value = *v;
      ++b.moves;
      gained = true;
      break;
    }
    // After a gain the same boundary is tried again: a strip may want
    // several rows moved.
    if (gained) {
      since_gain = 0;
    } else {
      ++since_gain;
      ++k;
    }
  }
  if (b.moves == 0) b.options.spatial_rows = opts.spatial_rows;
  return b;
}

}  // namespace shoal
