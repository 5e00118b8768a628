#include "plan/task_weights.h"

#include "graph/cost.h"

namespace shoal {

StatusOr<WeightStore> SliceTaskWeights(const Task& task,
                                       const WeightStore& model_weights) {
  WeightStore out;
  for (const auto& w : task.weights) {
    auto it = model_weights.find(w.source);
    if (it == model_weights.end()) {
      return InvalidArgument("task " + task.name + " needs weight '" +
                             w.source + "', which the model does not have");
    }
    auto t = ExtractRegion(it->second, w.region);
    if (!t.ok()) {
      return t.status().WithContext("task " + task.name + " slice of " +
                                    w.source);
    }
    out[w.name] = std::move(t).value();
  }
  return out;
}

std::vector<int64_t> WeightBytesPerDevice(const Plan& p) {
  std::vector<int64_t> bytes(p.devices.size(), 0);
  for (const auto& t : p.tasks) {
    int64_t b = 0;
    for (const auto& w : t.weights) b += w.region.elements() * kBytesPerElement;
    for (int d : t.Replicas()) bytes[d] += b;  // once per device
  }
  return bytes;
}

}  // namespace shoal
