// Helpers of --strategy auto that tests and the benchmark use (auto,
// procedure1 and random register themselves as strategies: MakePlan in
// partition/strategy.h finds them by name).
#ifndef SHOAL_PLANNER_AUTO_PLAN_H_
#define SHOAL_PLANNER_AUTO_PLAN_H_

#include <memory>
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
// paper's baseline); deterministic for a seed.
Assignment RandomAssignment(const std::vector<PlanUnit>& units, int devices,
                            uint64_t seed);

}  // namespace shoal

#endif  // SHOAL_PLANNER_AUTO_PLAN_H_
