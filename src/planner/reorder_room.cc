#include "planner/reorder_room.h"

#include <vector>

#include "plan/plan_cost.h"
#include "plan/task_weights.h"

namespace shoal {

namespace {

// Where `p` overflows a device that way, keeps that weight's bytes out of
// the capacity in `pr` of every device with that much memory (the next plan
// would move the weight to a look-alike); true when a reservation grew, so
// that planning again can give a plan that fits.
bool ReserveReorderRoom(const Plan& p, UnitPricer* pr) {
  const int n = pr->model().num_devices();
  if (static_cast<int>(p.devices.size()) != n) return false;
  const auto wb = WeightBytesPerDevice(p);
  const auto largest = LargestWeightPerDevice(p);
  const auto act = PeakActivationPerDevice(p);
  bool grew = false;
  for (int d = 0; d < n; ++d) {
    const int64_t mem = p.devices[d].memory_bytes;
    if (mem <= 0 || DeviceWeightMemory(wb[d], largest[d]) + act[d] <= mem) {
      continue;
    }
    const int64_t room = largest[d] + act[d];
    for (int e = 0; e < n; ++e) {
      if (p.devices[e].memory_bytes != mem || pr->Reserved(e) >= room) continue;
      pr->Reserve(e, room);
      grew = true;
    }
  }
  return grew;
}

// Reservations only grow and are bounded by the largest weight, so few
// rounds settle; each round of the MILP gets the time left, at least a
// quarter of the limit.
constexpr int kReorderRetries = 3;

}  // namespace

StatusOr<Plan> WithReorderRoom(
    const UnitPricer& pr,
    const std::function<StatusOr<Plan>(const UnitPricer&)>& make,
    std::string* memo) {
  UnitPricer rp = pr;
  for (int attempt = 0;; ++attempt) {
    StatusOr<Plan> p = make(rp);
    if (!p.ok() && attempt > 0) {
      return FailedPrecondition(
          "its plan overflowed a device by the room reordering its largest "
          "weight takes, and with that room kept: " +
          p.status().message());
    }
    if (!p.ok() || attempt == kReorderRetries || !ReserveReorderRoom(*p, &rp))
      return p;
    std::vector<int> kept;
    for (int d = 0; d < rp.model().num_devices(); ++d)
      if (rp.Reserved(d) > 0) kept.push_back(d);
    *memo = "planned " + std::to_string(attempt + 2) +
            " times, keeping room on " +
            GroupName(rp.model().cluster().PlanDevices(), kept) +
            " to reorder its largest weight (the first plan did not fit)";
  }
}

}  // namespace shoal
