// Partial sums of a layer split by its inputs: summed on one device, or
// reduce-scattered over the devices that hold them (PlanBuilder).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "partition/plan_builder_impl.h"
#include "partition/split_counts.h"

namespace shoal {
namespace plan_build {

Status PlanBuilder::MergePartials(const std::string& tensor, int device) {
  if (device < 0) device = req_.hub;
  const int t = NewTask("merge " + tensor + "@" + std::to_string(device),
                        {device}, "", Scheme::kWhole);
  plan_.tasks[t].scheme = "merge";
  if (device == req_.hub) {
    RETURN_IF_ERROR(Need(t, tensor, Region::Full(ShapeOf(tensor)), ""));
    return Status::Ok();
  }
  Dist& d = dist_.at(tensor);
  for (const auto& h : d.holders) {
    plan_.transfers.push_back(Transfer{
        Endpoint{h.task, NameIn(h, tensor), h.region.RelativeTo(h.region)},
        Endpoint{t, tensor, h.region}, Merge::kSum, d.layer});
  }
  RETURN_IF_ERROR(plan_.tasks[t].fragment.AddInput(tensor, ShapeOf(tensor)));
  d = Dist{Dist::kWhole, {Holder{t, Region::Full(ShapeOf(tensor))}}, ""};
  return Status::Ok();
}

StatusOr<bool> PlanBuilder::ScatterPartials(const std::string& tensor) {
  if (!req_.reduce_on_peers) return false;
  const Dist partials = dist_.at(tensor);
  const Shape& s = ShapeOf(tensor);
  if (partials.kind != Dist::kPartials || s.size() < 2) return false;
  // One holder per device, or (overlap_reductions) chunks of rows that
  // together make the whole on each device.
  std::vector<int> devs;
  std::map<int, int64_t> held;
  double sum = 0;
  bool chunked = false;
  for (const auto& h : partials.holders) {
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) return false;
    const int dev = DeviceOfTask(h.task);
    chunked |= !(h.region == Region::Full(s));
    held[dev] += h.region.elements();
    if (std::find(devs.begin(), devs.end(), dev) != devs.end()) continue;
    devs.push_back(dev);
    sum += shares_[dev];
  }
  for (const auto& [dev, n] : held) {
    if (n != NumElements(s)) return false;
  }
  if (devs.size() < 2 || devs.size() > kMaxReduceScatterDevices) {
    return false;
  }
  std::vector<double> shares;
  for (int dev : devs) shares.push_back(shares_[dev] / sum);
  // A transformer's [tokens, features] sums are sliced by tokens
  // (sequence parallel): LayerNorm, which reads whole tokens, then runs on
  // each device's own tokens where they are.
  const int axis = req_.along_heads && s.size() == 2 &&
                           s[0] >= static_cast<int64_t>(devs.size())
                       ? 0
                       : 1;
  if (chunked && axis != 0) return false;
  auto counts = SplitCounts(s[axis], shares);
  if (!counts.ok()) return false;
  for (int64_t c : counts.value()) {
    if (c < 1) return false;
  }
  Dist out{Dist::kParts, {}, partials.layer};
  int64_t b = 0;
  for (size_t i = 0; i < devs.size(); ++i) {
    Region slice = Region::Full(s);
    slice.begin[axis] = b;
    slice.end[axis] = b + counts.value()[i];
    b = slice.end[axis];
    const int t = NewTask("reduce " + tensor + "@" + std::to_string(devs[i]),
                          {devs[i]}, "", Scheme::kWhole);
    plan_.tasks[t].scheme = "reduce";
    for (const auto& h : partials.holders) {
      auto cut = Intersect(h.region, slice);
      if (!cut) continue;
      plan_.transfers.push_back(Transfer{
          Endpoint{h.task, NameIn(h, tensor), cut->RelativeTo(h.region)},
          Endpoint{t, tensor, cut->RelativeTo(slice)}, Merge::kSum,
          partials.layer});
    }
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddInput(tensor, slice.extent()));
    out.holders.push_back(Holder{t, slice});
    reducers_.insert(t);
  }
  dist_[tensor] = std::move(out);
  return true;
}

Status PlanBuilder::ResolvePartials(const std::string& tensor) {
  if (dist_.at(tensor).kind != Dist::kPartials) return Status::Ok();
  ASSIGN_OR_RETURN(bool scattered, ScatterPartials(tensor));
  return scattered ? Status::Ok() : MergePartials(tensor);
}

}  // namespace plan_build
}  // namespace shoal
