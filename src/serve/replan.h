// The parts of a re-plan that are decisions and words, apart from the
// server's locks and RPCs: whether a new plan is worth a switch, the record
// a status shows, and the log line that says what happened and why.
#ifndef SHOAL_SERVE_REPLAN_H_
#define SHOAL_SERVE_REPLAN_H_

#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "plan/plan.h"
#include "shoal.pb.h"
#include "util/status.h"

namespace shoal {

// The largest of `v`; 0 when empty.
double MaxOf(const std::vector<double>& v);

// Whether two plans run the same tasks on the same devices: shares and the
// planner's reasons aside.
bool SamePlanShape(const Plan& a, const Plan& b);

// The new plan against the current one, when both are for the same
// devices. `new_ms`: the new plan's predicted compute per device.
struct ReplanVerdict {
  bool keep_current = false;  // no switch: the current plan, new speeds
  // The current plan's devices at the measured speeds, and its predicted
  // compute at them (what the server adopts when it keeps the plan).
  std::vector<DeviceSpec> current_devices;
  std::vector<double> current_ms;
  std::string why;  // when kept: why no new plan
};

// `force`: switch unless the plan is the same. Otherwise the new plan must
// make the busiest device faster by more than `min_gain` (a fraction).
// Empty `current_devices` in the verdict: the device sets differ, the
// comparison does not apply and the new plan is deployed.
StatusOr<ReplanVerdict> JudgeAgainstCurrent(
    const Plan& current, const std::vector<DeviceSpec>& current_devices,
    const Plan& next, const std::vector<double>& next_ms,
    const std::vector<DeviceSpec>& devices, bool force, double min_gain);

// "dev0 1.00 -> 2.00, dev1 1.00 -> 0.50, dev2 1.00 -> gone"; without
// `before`: "dev0 1.00, dev1 1.00".
std::string SharesLine(const std::vector<DeviceSpec>& before,
                       const std::vector<DeviceSpec>& after);

// One switch, as a status and the dashboard show it.
rpc::Replan ReplanRecord(int64_t generation, const std::string& kind,
                         const std::string& reason, const std::string& strategy,
                         const std::vector<DeviceSpec>& old_devices,
                         const std::vector<DeviceSpec>& devices,
                         const std::vector<double>& predicted_ms,
                         double measured_ms);

// What the log says of one switch.
struct SwitchReport {
  bool first = false;  // the server's first plan: nothing switched from
  int64_t generation = 0;
  std::string strategy, note, reason;
  std::vector<DeviceSpec> old_devices;
  std::vector<DeviceSpec> devices;
  std::vector<double> predicted_ms;  // per device
  // The old plan's measured compute per request of each old device (0 or
  // missing: not measured).
  std::vector<double> measured_before_ms;
  double deploy_ms = 0, switch_ms = 0;
  int64_t uploaded_bytes = 0;
  bool drained_first = false;  // the devices could not hold both plans
  bool cancelled = false;      // the old plan lost a device
  int old_requests = 0;        // drained or cancelled
  int64_t old_generation = 0;
};
std::string SwitchReportText(const SwitchReport& r);

}  // namespace shoal

#endif  // SHOAL_SERVE_REPLAN_H_
