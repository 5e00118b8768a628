// Strips cut by finish time, not by speed alone. The spatial strategy sizes
// each strip by its device's share of the rows; but a strip in the middle of
// a deep chain recomputes a halo on both sides where one at the edge does
// it on one, and a strip whose input leaves the input device's uplink last
// starts last. On eight Pi 3B+ over Wi-Fi, AlexNet's strips of equal rows
// finished 17 ms apart. BalanceStrips moves rows between neighbouring
// strips while the prediction improves.
#ifndef SHOAL_PLANNER_STRIP_BALANCE_H_
#define SHOAL_PLANNER_STRIP_BALANCE_H_

#include <functional>
#include <string>

#include "graph/graph.h"
#include "partition/strategy.h"

namespace shoal {

struct StripBalance {
  PlanOptions options;  // with spatial_rows set where a move paid
  double value = 0;     // the objective of the plan they make
  int moves = 0;        // moves that paid
  int evaluations = 0;  // plans predicted
};

// Two descents, each move's plan priced by `value` (lower is better; an
// error skips the move), from the plan `opts` makes, whose value is
// `start`, for at most `max_evaluations` plans: first a share moved between
// neighbouring devices, every chain's strips cut anew from the shares;
// then one row moved across one boundary between neighbouring strips of
// one chain. Every strip keeps a row at least. A plan whose chains are all
// cut into 2-D tiles moves shares between any two devices of a chain
// instead (PlanOptions::spatial_shares).
StatusOr<StripBalance> BalanceStrips(
    const Graph& g, const PlanOptions& opts, double start,
    const std::function<StatusOr<double>(const Plan&)>& value,
    int max_evaluations);

}  // namespace shoal

#endif  // SHOAL_PLANNER_STRIP_BALANCE_H_
