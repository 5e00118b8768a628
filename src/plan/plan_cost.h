// The F/T/C cost of a Plan, counted from the plan itself: F the weights each
// device holds, T the multiplications on the longest path through the tasks
// (a device runs its tasks one after another), C the elements that cross
// between devices, per layer as the papers attribute them.
#ifndef SHOAL_PLAN_PLAN_COST_H_
#define SHOAL_PLAN_PLAN_COST_H_

#include <string>
#include <vector>

#include "plan/plan.h"

namespace shoal {

struct LayerPlanCost {
  std::string name;
  std::string scheme;
  int64_t communication_elements = 0;
  std::vector<int64_t> weight_elements_per_device;
  std::vector<int64_t> macs_per_device;
};

struct PlanCost {
  std::vector<LayerPlanCost> layers;  // model nodes with weights or MACs
  int64_t communication_elements = 0;
  std::vector<int64_t> weight_bytes_per_device;
  std::vector<int64_t> macs_per_device;
  int64_t macs_longest_path = 0;
  int64_t max_weight_bytes_per_device() const;
};

// What crosses one directed link (a device's uplink towards one peer) per
// inference, as the wire carries it (Plan::WireBytes).
struct LinkTraffic {
  int from = 0, to = 0;  // devices
  int64_t bytes = 0;
  int transfers = 0;
};
// Every link that carries something, most bytes first (ties: by from, to).
std::vector<LinkTraffic> TrafficPerLink(const Plan& p, int64_t request = 0);

// `model`: the shaped graph the plan was made from (layer order and names).
StatusOr<PlanCost> ComputePlanCost(const Plan& p, const Graph& model,
                                   int64_t request = 0);

// The memory a worker needs for `weight_bytes` of weights whose largest
// single weight is `largest_weight`: each weight once, in the engine's
// layout (the cache that makes a redeploy free is on disk,
// runtime/blob_cache.h), plus the largest once more, for the moment the
// engine reorders it while the plain copy read from the cache exists.
// The worker adds its activations and a deployment kept alongside.
int64_t DeviceWeightMemory(int64_t weight_bytes, int64_t largest_weight);
// What a device's weights may take of its memory (the planners' sums; the
// reorder's room is reserved apart). 0 (unlimited) stays 0.
int64_t WeightCapacity(int64_t memory_bytes);
// Whether one layer's `weight_bytes` can sit whole on a device: held once
// and, while its largest weight is reordered, once more (CheckPlanMemory's
// count for a device holding that layer alone, taking the layer as one
// weight). Unlimited memory: always.
bool FitsWhole(int64_t weight_bytes, int64_t memory_bytes);

// Per device, its largest single weight region (bytes): what the engine
// holds once more while it reorders that weight.
std::vector<int64_t> LargestWeightPerDevice(const Plan& p);

// Per device, the largest peak of live activations of one of its tasks
// (PeakActivationBytes of the task's fragment, its inputs included: the
// messages it waits on).
std::vector<int64_t> PeakActivationPerDevice(const Plan& p);

// Whether every device's weights and activations fit its memory as a
// worker holds them (DeviceWeightMemory + PeakActivationPerDevice; devices
// with memory 0 are unlimited); the error names the device and the numbers.
// Fails first, and says so, when the devices together cannot hold the model's
// weights under any plan.
Status CheckPlanMemory(const Plan& p, const Graph& model);

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_COST_H_
