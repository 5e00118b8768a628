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
    auto t = ExtractRegionOfView(it->second, w.IndexShape(it->second.shape),
                                 w.region);
    // Through a view, the box's elements in order fill the fragment's
    // weight, of another shape.
    const TensorInfo* ti = task.fragment.FindTensor(w.name);
    if (t.ok() && !w.view.empty()) {
      if (ti == nullptr || NumElements(ti->shape) != NumElements(t->shape)) {
        t = InvalidArgument("slice " + w.region.ToString() +
                            " does not fill the fragment's weight '" + w.name +
                            "'");
      } else {
        t->shape = ti->shape;
      }
    }
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
