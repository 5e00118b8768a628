// Planning again with room kept for a weight's reorder: the planners'
// memory sums count a device's weights, but the worker also holds the
// largest of them once more while it reorders it, and its activations
// (CheckPlanMemory), which a sum over units cannot express.
#ifndef SHOAL_PLANNER_REORDER_ROOM_H_
#define SHOAL_PLANNER_REORDER_ROOM_H_

#include <functional>
#include <string>

#include "plan/plan.h"
#include "planner/placement.h"
#include "util/status.h"

namespace shoal {

// `make` plans on a copy of `pr`; while its Plan overflows a device by the
// room a reorder needs, that room is reserved and `make` plans again.
// `memo` (when room was kept) names the devices.
StatusOr<Plan> WithReorderRoom(
    const UnitPricer& pr,
    const std::function<StatusOr<Plan>(const UnitPricer&)>& make,
    std::string* memo);

}  // namespace shoal

#endif  // SHOAL_PLANNER_REORDER_ROOM_H_
