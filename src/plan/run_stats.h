// What one run of a plan moved and spent, and the count of a plan's
// communication without running it: the in-process runner, the cluster
// coordinator, the simulator and `shoal cost` all count bytes this way, so
// their figures agree.
#ifndef SHOAL_PLAN_RUN_STATS_H_
#define SHOAL_PLAN_RUN_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "plan/broadcast.h"
#include "plan/plan.h"

namespace shoal {

// What one run moved and spent. Bytes count only transfers between
// different devices: a device reading its own data costs nothing.
struct RunStats {
  int64_t elements_total = 0;
  int64_t bytes_total = 0;
  std::vector<int64_t> bytes_sent;      // per device
  std::vector<int64_t> bytes_received;  // per device
  std::map<std::string, int64_t> elements_per_layer;
  std::vector<double> task_ms;  // compute time of each task
  double latency_ms = 0;
};

// Zero counts sized for plan `p`'s devices and tasks.
RunStats EmptyRunStats(const Plan& p);

// Adds one message of `p` (a hop of plan/broadcast.h's WireHops) to `s`.
void CountWireHop(const Plan& p, const WireHop& h, RunStats* s);

// Counts the plan's communication for one request without running it.
RunStats CountCommunication(const Plan& plan, int64_t request = 0);

}  // namespace shoal

#endif  // SHOAL_PLAN_RUN_STATS_H_
