#include "plan/plan.h"

#include <algorithm>

#include "graph/cost.h"
#include "graph/sparsity.h"

namespace shoal {

std::string WireDtypeName(WireDtype d) {
  switch (d) {
    case WireDtype::kF16:
      return "f16";
    case WireDtype::kBF16:
      return "bf16";
    case WireDtype::kInt8:
      return "int8";
    default:
      return "f32";
  }
}

StatusOr<WireDtype> ParseWireDtype(const std::string& name) {
  if (name == "f32") return WireDtype::kF32;
  if (name == "f16") return WireDtype::kF16;
  if (name == "bf16") return WireDtype::kBF16;
  return InvalidArgument(
      "wire dtype '" + name + "' is not one of f32, f16, bf16" +
      (name == "int8" ? " (a quantized model's int8 tensors travel "
                        "as int8 by themselves: plan it with "
                        "--dtype int8)"
                      : ""));
}

int64_t WireDtypeBytes(WireDtype d) {
  switch (d) {
    case WireDtype::kF16:
    case WireDtype::kBF16:
      return 2;
    case WireDtype::kInt8:
      return 1;
    default:
      return kBytesPerElement;
  }
}

double WireTolerance(WireDtype d) {
  switch (d) {
    case WireDtype::kF16:
      return 1e-2;
    case WireDtype::kBF16:
      return 5e-2;
    default:
      return 1e-4;
  }
}

int64_t Plan::WireBytes(const Transfer& x) const {
  const int64_t n = x.src.region.elements();
  if (x.src.task == kModelInput && input_pixels) return n;
  const int64_t raw = n * WireDtypeBytes(TransferWire(x).dtype);
  if (!wire.lz4 || !SparseSource(x)) return raw;
  const Task* t = FindTask(x.src.task);
  const double f = IsPooledSparseTensor(t->fragment, x.src.tensor)
                       ? kPooledWireFraction
                       : kSparseWireFraction;
  return static_cast<int64_t>(static_cast<double>(raw) * f);
}

WireSettings Plan::TransferWire(const Transfer& x) const {
  WireSettings w = wire;
  if (x.int8) w.dtype = WireDtype::kInt8;
  return w;
}

bool Plan::SparseSource(const Transfer& x) const {
  const Task* t = FindTask(x.src.task);
  return t != nullptr && IsSparseTensor(t->fragment, x.src.tensor);
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
