// Predicted latency and throughput of a Plan on a cluster, on the shared
// LatencyModel. The latency is the simulator's (sim/simulator.h), which
// sends as the runtime does: several messages in flight from a device,
// their bytes queued on its link, broadcast trees, a message's CPU at its
// ends (under a CPU quota taking the device's quota like compute). The
// throughput is the busiest device's compute or uplink time per request.
#ifndef SHOAL_PLANNER_PREDICT_H_
#define SHOAL_PLANNER_PREDICT_H_

#include <vector>

#include "partition/strategy.h"
#include "plan/plan.h"
#include "sim/latency_model.h"

namespace shoal {

struct Prediction {
  // One request on an idle cluster, averaged over the requests it takes for
  // every replica set to come round (round robin), at most kLatencyRequests.
  double latency_s = 0;
  // Requests per second at full load: 1 / the busiest device's compute or
  // uplink time per request (replicated tasks spread their requests), or
  // the shared medium's airtime per request when that is longer.
  double throughput_rps = 0;
  // Per device, per request: its tasks (and under a CPU quota the CPU of
  // its messages), and its uplink's time (the model input's is the
  // coordinator's).
  std::vector<double> compute_s;
  std::vector<double> send_s;
  // With a shared medium (cluster/cluster.h): the channel's airtime per
  // request, every device's messages together; 0 without one.
  double medium_s = 0;
  int bottleneck = 0;  // the busiest device
  double period_s() const {
    return throughput_rps > 0 ? 1 / throughput_rps : 0;
  }
};

constexpr int kLatencyRequests = 64;

// `m` has the plan's devices, in order.
StatusOr<Prediction> PredictPlan(const Plan& p, const LatencyModel& m);

// The objective's value, smaller is better: latency, or time per request.
double ObjectiveValue(const Prediction& pr, PlanObjective objective);

// The per-device rows a Plan stores (idle: latency minus compute and sends).
std::vector<DevicePrediction> DeviceRows(const Plan& p, const Prediction& pr);

}  // namespace shoal

#endif  // SHOAL_PLANNER_PREDICT_H_
