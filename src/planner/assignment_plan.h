// Plans from an assignment of the model's units to devices: Procedure 1's
// (the collaborative-execution paper's heuristic), the paper's random
// baseline, and the options auto plans with. `procedure1` and `random`
// register themselves as strategies (partition/strategy.h finds them by
// name); auto (planner/auto_plan.cc) makes candidates with these too.
#ifndef SHOAL_PLANNER_ASSIGNMENT_PLAN_H_
#define SHOAL_PLANNER_ASSIGNMENT_PLAN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "partition/strategy.h"
#include "planner/placement.h"
#include "sim/latency_model.h"

namespace shoal {

// The cost model auto uses without one: each device's share as its speed,
// links free.
std::shared_ptr<const LatencyModel> DefaultLatencyModel(
    const std::vector<PlanDevice>& devices);

// The Plan of an assignment, its decisions from `reasons` (per unit).
StatusOr<Plan> PlanAssignment(const Graph& g, const PlanOptions& opts,
                              const std::vector<PlanUnit>& units,
                              const Assignment& a,
                              const std::vector<std::string>& reasons);

// Every unit whole on a device drawn at random (the collaborative-execution
// paper's baseline); deterministic for a seed. Units `fixed` places (split:
// Procedure1Splits) keep their placement: the paper's distributions all
// split a layer that does not fit, and its random one "ensures
// correctness".
Assignment RandomAssignment(const std::vector<PlanUnit>& units, int devices,
                            uint64_t seed,
                            const std::vector<Placement>& fixed = {});

// The options auto and procedure1 plan with: the latency model (given or
// from the devices) and shares that follow the speed it predicts with
// (measured, if profiled).
StatusOr<PlanOptions> AutoOptions(const PlanOptions& in);

// Procedure 1's Plan for `objective`, planned again with reorder room where
// it overflows a device (WithReorderRoom, which fills `memo`).
StatusOr<Plan> Procedure1Plan(const Graph& g, const PlanOptions& opts,
                              const std::vector<PlanUnit>& units,
                              const UnitPricer& pr, PlanObjective objective,
                              std::string* memo);

}  // namespace shoal

#endif  // SHOAL_PLANNER_ASSIGNMENT_PLAN_H_
