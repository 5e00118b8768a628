// What `shoal serve` measures and decides each monitoring tick (the
// collaborative-execution paper's Step 3): per device, the compute a request
// costs it against what the plan predicted, and whether one device is out of
// balance with the others. Pure functions of the workers' statistics, so the
// decisions are tested without a cluster.
#ifndef SHOAL_SERVE_MONITOR_H_
#define SHOAL_SERVE_MONITOR_H_

#include <deque>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "plan/plan.h"
#include "runtime/coordinator.h"
#include "util/stats.h"
#include "util/status.h"

namespace shoal {

// One plan device over the monitoring window.
struct DeviceLoad {
  double predicted_ms = 0;  // compute per request at the assumed speed
  double measured_ms = 0;   // compute per request measured (0: no data)
  int64_t samples = 0;      // fewest runs of any of its tasks in the window
  double queue_mean = 0;    // tasks ready when one became ready, mean
  double utilisation = 0;   // compute busy over wall time in the window
};

// Compute per request of each plan device predicted by the shared cost
// model (sim/latency_model.h) for devices of these speeds: its tasks' times,
// a replicated task counting 1/replicas.
StatusOr<std::vector<double>> PredictComputeMs(
    const Plan& plan, const std::vector<DeviceSpec>& devices);

// The per-task samples of the last `ticks` Stats pulls (reset each time).
class LoadWindow {
 public:
  explicit LoadWindow(int ticks) : ticks_(ticks) {}
  void Add(const std::vector<DeviceStats>& stats);
  void Clear() { window_.clear(); }
  // Measured compute per request: for each task of a device the median of
  // its run times in the window (robust to a stray slow run), summed, a
  // replicated task counting 1/replicas. `predicted_ms` per plan device.
  std::vector<DeviceLoad> Loads(const Plan& plan,
                                const std::vector<double>& predicted_ms) const;

 private:
  int ticks_;
  std::deque<std::vector<DeviceStats>> window_;
};

struct Imbalance {
  bool found = false;
  int device = -1;
  double ratio = 1;  // its measured/predicted over the others' (median)
  std::string why;
};

// A device whose measured/predicted ratio differs from the median ratio of
// the other devices by more than `threshold` (either way: slowed down or sped
// up). Devices with fewer than `min_samples` runs per task, or predicted at
// under 2 % of the busiest device's compute (fixed overhead times them), are
// left out; at least two devices must be measured.
Imbalance FindImbalance(const std::vector<DeviceLoad>& loads,
                        const std::vector<std::string>& names, double threshold,
                        int64_t min_samples);

// Speeds that match the measurements: a device's assumed speed times the
// median ratio over its own (the cluster-wide scale stays that of the
// cluster file, so a joining device's spec speed still fits). Devices
// without measurements keep their assumed speed.
std::vector<double> MeasuredSpeeds(const std::vector<DeviceLoad>& loads,
                                   const std::vector<double>& assumed,
                                   int64_t min_samples);

}  // namespace shoal

#endif  // SHOAL_SERVE_MONITOR_H_
