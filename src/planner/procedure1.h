// The collaborative-execution paper's Procedure 1 (§5) on unequal devices:
// step 1 gives the layers whose weights fit no device model parallelism
// (split over the fewest fastest devices whose slices fit); step 2 groups
// consecutive layers into pipeline stages of equal predicted latency, one
// stage per device, trying every stage count and keeping the best for the
// objective; for throughput, spare devices become data-parallel replicas of
// the slowest stage. Step 3 (monitor and re-plan) belongs to `shoal serve`.
#ifndef SHOAL_PLANNER_PROCEDURE1_H_
#define SHOAL_PLANNER_PROCEDURE1_H_

#include <string>
#include <vector>

#include "planner/placement.h"

namespace shoal {

struct HeuristicResult {
  Assignment assignment;
  std::vector<std::string> reasons;  // per unit
  std::string summary;
  Estimate estimate;
};

// Errors name the layer whose weights fit no group of devices.
StatusOr<HeuristicResult> Procedure1(const UnitPricer& pr,
                                     PlanObjective objective);

// Stages over `devices` in order (each a non-empty run of units; units in
// `fixed` keep their placement), balanced so the slowest stage is as fast
// as it can be; empty when no balance fits the devices' memory.
Assignment BalancedStages(const UnitPricer& pr, const std::vector<int>& devices,
                          const std::vector<Placement>& fixed);

}  // namespace shoal

#endif  // SHOAL_PLANNER_PROCEDURE1_H_
