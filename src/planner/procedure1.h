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

// Step 1 alone, as Procedure1 takes it: per unit, its split placement when
// its weights fit no device, else whole on device -1. The random baseline
// keeps these splits (the paper's distributions all split such a layer).
StatusOr<std::vector<Placement>> Procedure1Splits(const UnitPricer& pr);

// Stages over `devices` in order (each a run of units whole on one device,
// or one unit's split version over up to 8 consecutive devices; units in
// `fixed` keep their placement), balanced so the slowest stage is as fast
// as it can be; empty when no balance fits the devices' memory.
Assignment BalancedStages(const UnitPricer& pr, const std::vector<int>& devices,
                          const std::vector<Placement>& fixed);

}  // namespace shoal

#endif  // SHOAL_PLANNER_PROCEDURE1_H_
