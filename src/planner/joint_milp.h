// The fully-distributed paper's ILP (§4.3) extended to a joint MILP over
// unequal devices (docs/planner.md): per unit one binary per candidate
// placement (whole on a device, replicas, lop/lip/fuse/spatial over a group
// of the fastest devices, parts by speed), flow variables for the
// transition between consecutive units' placements, each device's memory
// as a constraint; minimising the predicted latency (sum of unit and
// transition times) or the busiest device's time per request. GLPK.
#ifndef SHOAL_PLANNER_JOINT_MILP_H_
#define SHOAL_PLANNER_JOINT_MILP_H_

#include <string>
#include <vector>

#include "planner/placement.h"

namespace shoal {

struct CandidateCaps {
  int whole_devices = 12;  // fastest devices a unit may run whole on
  int groups = 4;          // groups of the fastest devices splits use
  int group_size = 32;     // largest group
  bool replicate = false;  // replicas (throughput only)
  // When set, the devices a unit may run whole on, fastest first (each
  // standing for its class of equal devices); else the fastest devices.
  std::vector<int> whole;
};

// Devices the planner cannot tell apart (LatencyModel::SameDevice), in
// classes; the hub is always alone in its class (it holds the input).
struct DeviceClasses {
  std::vector<int> of;                    // device -> class
  std::vector<std::vector<int>> members;  // class -> devices, fastest first
};
DeviceClasses ClassifyDevices(const LatencyModel& m, int hub);

// Devices by speed, fastest first; the hub first among equals.
std::vector<int> SpeedOrder(const LatencyModel& m, int hub);
// The groups splits use: prefixes of SpeedOrder of growing sizes.
std::vector<std::vector<int>> CandidateGroups(const LatencyModel& m, int hub,
                                              const CandidateCaps& caps);
// Every placement of unit u the caps allow whose price is known.
std::vector<Placement> UnitCandidates(const UnitPricer& pr, int u,
                                      const CandidateCaps& caps);

struct MilpOptions {
  PlanObjective objective = PlanObjective::kLatency;
  double time_limit_s = 10;
  int max_columns = 40000;  // candidates shrink until the MILP fits
  // Latency: one whole-placement variable per class of equal devices, not
  // per device (docs/planner.md); throughput keeps devices apart, since
  // pipelining over equal devices is what it wants.
  bool group_equal_devices = true;
  int group_above = 12;  // devices; at or below, one variable per device
};

struct MilpResult {
  Assignment assignment;
  bool proven_optimal = false;
  std::string status;  // for people: size, caps used, how it ended
  double objective = 0;
  int columns = 0, rows = 0;
  CandidateCaps caps;
  int classes = 0;  // of equal devices, when grouped
};

// DeadlineExceeded when the time ran out before any solution; other errors
// say why (a unit with no candidate names it, infeasible memory, too big).
StatusOr<MilpResult> SolveJointMilp(const UnitPricer& pr,
                                    const MilpOptions& opts);

}  // namespace shoal

#endif  // SHOAL_PLANNER_JOINT_MILP_H_
