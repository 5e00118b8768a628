#include "plan/plan.h"

#include <algorithm>

#include "graph/cost.h"

namespace shoal {

int64_t Plan::WireBytes(const Transfer& x) const {
  const int64_t per =
      x.src.task == kModelInput && input_pixels ? 1 : kBytesPerElement;
  return x.src.region.elements() * per;
}

const Task* Plan::FindTask(int id) const {
  if (id < 0 || id >= static_cast<int>(tasks.size())) return nullptr;
  return &tasks[id];
}

std::vector<int> Task::Replicas() const {
  std::vector<int> out;
  for (int d : devices) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  }
  return out;
}

double Task::Share(int device) const {
  if (devices.empty()) return 0;
  const auto n = std::count(devices.begin(), devices.end(), device);
  return static_cast<double>(n) / static_cast<double>(devices.size());
}

int Plan::DeviceOf(int task_id, int64_t request) const {
  if (task_id == kModelInput) return input_device;
  if (task_id == kModelOutput) return output_device;
  const Task* t = FindTask(task_id);
  if (t == nullptr || t->devices.empty()) return -1;
  return t->devices[request % static_cast<int64_t>(t->devices.size())];
}

}  // namespace shoal
