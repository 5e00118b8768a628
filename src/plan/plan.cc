#include "plan/plan.h"

namespace shoal {

const Task* Plan::FindTask(int id) const {
  if (id < 0 || id >= static_cast<int>(tasks.size())) return nullptr;
  return &tasks[id];
}

int Plan::DeviceOf(int task_id, int64_t request) const {
  if (task_id == kModelInput) return input_device;
  if (task_id == kModelOutput) return output_device;
  const Task* t = FindTask(task_id);
  if (t == nullptr || t->devices.empty()) return -1;
  return t->devices[request % static_cast<int64_t>(t->devices.size())];
}

}  // namespace shoal
