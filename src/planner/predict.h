// Predicted latency and throughput of a Plan on a cluster: a critical-path
// evaluation of its tasks and transfers on the shared LatencyModel. Each
// device runs its tasks in id order; each device's uplink sends one message
// at a time. The simulator (src/sim) may replace this by its discrete-event
// simulation behind the same function.
#ifndef SHOAL_PLANNER_PREDICT_H_
#define SHOAL_PLANNER_PREDICT_H_

#include <vector>

#include "plan/plan.h"
#include "sim/latency_model.h"

namespace shoal {

struct Prediction {
  // One request on an idle cluster, averaged over the requests it takes for
  // every replica set to come round (round robin), at most kLatencyRequests.
  double latency_s = 0;
  // Requests per second at full load: 1 / the busiest device's compute or
  // uplink time per request (replicated tasks spread their requests).
  double throughput_rps = 0;
  std::vector<double> compute_s;  // per device, per request
  std::vector<double> send_s;     // per device, per request
  int bottleneck = 0;             // the busiest device
  double period_s() const {
    return throughput_rps > 0 ? 1 / throughput_rps : 0;
  }
};

constexpr int kLatencyRequests = 16;

// `m` has the plan's devices, in order.
StatusOr<Prediction> PredictPlan(const Plan& p, const LatencyModel& m);

// The objective's value, smaller is better: latency, or time per request.
double ObjectiveValue(const Prediction& pr, const std::string& objective);

// The per-device rows a Plan stores (idle: latency minus compute and sends).
std::vector<DevicePrediction> DeviceRows(const Plan& p, const Prediction& pr);

}  // namespace shoal

#endif  // SHOAL_PLANNER_PREDICT_H_
