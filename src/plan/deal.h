#ifndef SHOAL_PLAN_DEAL_H_
#define SHOAL_PLAN_DEAL_H_

#include <vector>

namespace shoal {

// A task's replicas take its requests round robin over Task::devices
// (Plan::DeviceOf), so a device listed w times runs w of every
// devices.size() requests. On unequal devices an equal deal leaves the fast
// ones idle while the slow ones queue; DealInProportion lists each device
// about in proportion to its weight (its speed), each at least once, the
// list at most `max_len` long, and spreads each device's turns evenly over
// the list (smooth weighted round robin) so that no device gets a burst.
// Equal weights give `devices` unchanged: the plain round robin.
std::vector<int> DealInProportion(const std::vector<int>& devices,
                                  const std::vector<double>& weights,
                                  int max_len = 64);

}  // namespace shoal

#endif  // SHOAL_PLAN_DEAL_H_
