#include "plan/task_weights.h"

#include "graph/cost.h"
#include "graph/quantization.h"

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

int64_t SliceBytes(const Task& t, const WeightSlice& w) {
  const int64_t n = w.region.elements();
  return IsInt8Weight(t.fragment, w.name) ? n : n * kBytesPerElement;
}

std::vector<int64_t> WeightBytesPerDevice(const Plan& p) {
  std::vector<int64_t> bytes(p.devices.size(), 0);
  for (const auto& t : p.tasks) {
    int64_t b = 0;
    for (const auto& w : t.weights) b += SliceBytes(t, w);
    for (int d : t.Replicas()) bytes[d] += b;  // once per device
  }
  return bytes;
}

}  // namespace shoal
