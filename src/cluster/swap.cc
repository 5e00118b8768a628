#include "cluster/swap.h"

#include <algorithm>

#include "cluster/board.h"
#include "plan/plan_cost.h"
#include "plan/task_weights.h"

namespace shoal {
namespace {

constexpr int64_t kMiB = int64_t{1} << 20;

// The collaborative-execution paper states which layers swapped on its
// 1 GB Pi 3 under Keras 2.1 / TensorFlow 1.5 but not the figures behind
// it; these are chosen to agree with every such statement (docs/planner.md,
// "When a layer must be split", lists them): the first dense layers of AlexNet
// (144 MiB of weights), VGG16 (392 MiB) and C3D (128 MiB) must be split, every
// other layer of those models runs on one Pi, and VGG16's first dense layer
// alone takes minutes.
FrameworkMemory CollabPi3() {
  FrameworkMemory fm;
  // Raspbian's default GPU share on a 1 GB board (64 MiB) and the OS with
  // its services (about 96 MiB).
  fm.system_bytes = 160 * kMiB;
  // Python, TensorFlow 1.5, Keras and the Avro RPC server with the
  // model's graph (an estimate).
  fm.resident_bytes = 400 * kMiB;
  // Keras's load path: the HDF5 read, its converted array, the tensor fed
  // to the assign op and the variable.
  fm.layer_copies = 4;
  // An SD card's random 4 KiB reads, in the kernel's 32 KiB swap clusters.
  fm.swap_bytes_per_s = 4.0 * kMiB;
  fm.source =
      "estimates consistent with the collaborative-execution paper's "
      "statements (docs/planner.md)";
  return fm;
}

}  // namespace

const FrameworkMemory* FrameworkMemoryOf(const BoardClass* board) {
  static const FrameworkMemory collab = CollabPi3();
  if (board != nullptr && board->name == "pi3-collab") return &collab;
  return nullptr;
}

int64_t UsableBytes(const FrameworkMemory& fm, int64_t memory_bytes) {
  return std::max<int64_t>(0, memory_bytes - fm.system_bytes);
}

int64_t FootprintBytes(const FrameworkMemory& fm, int64_t weight_bytes,
                       int64_t largest_layer_bytes, int64_t activation_bytes) {
  return fm.resident_bytes + weight_bytes +
         static_cast<int64_t>(double(largest_layer_bytes) *
                              (fm.layer_copies - 1)) +
         activation_bytes;
}

bool LayerMustSplit(const FrameworkMemory& fm, int64_t memory_bytes,
                    int64_t weight_bytes) {
  if (memory_bytes <= 0) return false;
  return FootprintBytes(fm, weight_bytes, weight_bytes, 0) >
         UsableBytes(fm, memory_bytes);
}

int64_t WeightBudget(const FrameworkMemory& fm, int64_t memory_bytes) {
  if (memory_bytes <= 0) return 0;
  const double room =
      double(UsableBytes(fm, memory_bytes) - fm.resident_bytes) /
      fm.layer_copies;
  return std::max<int64_t>(1, static_cast<int64_t>(room));
}

double SwapSeconds(const FrameworkMemory& fm, int64_t memory_bytes,
                   int64_t footprint_bytes) {
  if (memory_bytes <= 0 || fm.swap_bytes_per_s <= 0) return 0;
  const int64_t over = footprint_bytes - UsableBytes(fm, memory_bytes);
  return over > 0 ? double(over) / fm.swap_bytes_per_s : 0;
}

std::vector<double> SwapSecondsPerTask(const Plan& p, int device,
                                       const FrameworkMemory& fm,
                                       int64_t memory_bytes) {
  std::vector<double> out(p.tasks.size(), 0.0);
  std::vector<int64_t> task_bytes(p.tasks.size(), 0);
  std::vector<int> mine;
  int64_t weights = 0, largest = 0;
  for (size_t i = 0; i < p.tasks.size(); ++i) {
    const Task& t = p.tasks[i];
    if (std::find(t.devices.begin(), t.devices.end(), device) ==
        t.devices.end()) {
      continue;
    }
    mine.push_back(static_cast<int>(i));
    for (const auto& w : t.weights) {
      // A layer's weight tensor stands for the layer (a task may hold
      // many): the framework copies one layer at a time.
      const int64_t b = SliceBytes(t, w);
      task_bytes[i] += b;
      largest = std::max(largest, b);
    }
    weights += task_bytes[i];
  }
  if (mine.empty()) return out;
  const auto act = PeakActivationPerDevice(p);
  const int64_t activations =
      device < static_cast<int>(act.size()) ? act[device] : 0;
  const double s = SwapSeconds(
      fm, memory_bytes, FootprintBytes(fm, weights, largest, activations));
  if (s <= 0) return out;
  for (int i : mine) {
    out[i] = weights > 0 ? s * double(task_bytes[i]) / double(weights)
                         : s / double(mine.size());
  }
  return out;
}

std::vector<double> SwapTable(const Plan& p,
                              const std::vector<const DeviceSpec*>& devices) {
  std::vector<double> table;
  const size_t nd = devices.size();
  for (size_t d = 0; d < nd; ++d) {
    const FrameworkMemory* fm = FrameworkMemoryOf(devices[d]->board);
    if (fm == nullptr) continue;
    const auto per_task = SwapSecondsPerTask(p, static_cast<int>(d), *fm,
                                             devices[d]->memory_bytes);
    for (size_t t = 0; t < per_task.size(); ++t) {
      if (per_task[t] <= 0) continue;
      if (table.empty()) table.assign(p.tasks.size() * nd, 0.0);
      table[t * nd + d] = per_task[t];
    }
  }
  return table;
}

}  // namespace shoal
