// What a task reads and where it comes from: the transfers that fill a
// task's input from the tasks that hold its parts (PlanBuilder).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "partition/plan_builder_impl.h"

namespace shoal {
namespace plan_build {

Status PlanBuilder::Need(int task, const std::string& tensor,
                         const Region& want,
                         const std::string& consumer_layer) {
  Task& t = plan_.tasks[task];
  if (t.fragment.FindTensor(tensor)) return Status::Ok();
  auto it = dist_.find(tensor);
  if (it == dist_.end()) {
    return Internal("tensor " + tensor + " is read before it is computed");
  }
  Dist& d = it->second;
  const int dev = DeviceOfTask(task);
  // Data a split layer produced counts as that layer's communication when
  // it goes to the input device (the papers' gather and merge); the rest
  // counts for the layer that reads it.
  const bool from_split = d.kind != Dist::kWhole;
  const std::string layer =
      from_split && (dev == req_.hub || consumer_layer.empty())
          ? d.layer
          : consumer_layer;
  if (d.kind == Dist::kPartials) {
    // Only a whole task on the input device sums partials as it receives
    // them; every other reader's caller merges them (MergePartials) before
    // it makes the reader's task, since a task receives only from earlier
    // ones.
    const bool hub_whole = t.layer.empty() && dev == req_.hub;
    if (!hub_whole) {
      return Internal("task " + t.name + " reads the partial sums of " +
                      tensor + " before they are merged");
    }
    if (!(want == Region::Full(ShapeOf(tensor)))) {
      return Internal("partial sums of " + tensor + " read in part");
    }
    for (const auto& h : d.holders) {
      plan_.transfers.push_back(Transfer{
          Endpoint{h.task, NameIn(h, tensor), h.region.RelativeTo(h.region)},
          Endpoint{task, tensor, h.region}, Merge::kSum, layer});
    }
    RETURN_IF_ERROR(plan_.tasks[task].fragment.AddInput(tensor, want.extent()));
    d = Dist{Dist::kWhole, {Holder{task, want}}, ""};
    return Status::Ok();
  }
  // A device that already received this part for another of its tasks
  // forwards that copy locally instead of receiving it twice; but not
  // when its own tasks hold all of it: then the forward would only make
  // this task wait for the other (a strip's interior for its edge).
  const bool single = plan_.tasks[task].devices.size() == 1;
  int64_t own = 0;
  for (const auto& h : d.holders) {
    if (h.task < 0 || DeviceOfTask(h.task) != dev) continue;
    if (auto cut = Intersect(h.region, want)) own += cut->elements();
  }
  const bool held_here = d.kind == Dist::kParts && own == want.elements();
  for (const auto& h : single && !held_here ? received_[{tensor, dev}]
                                            : std::vector<Holder>{}) {
    if (h.task < task && Contains(h.region, want)) {
      plan_.transfers.push_back(
          Transfer{Endpoint{h.task, tensor, want.RelativeTo(h.region)},
                   Endpoint{task, tensor, Region::Full(want.extent())},
                   Merge::kCopy, consumer_layer});
      return plan_.tasks[task].fragment.AddInput(tensor, want.extent());
    }
  }
  // A holder on this device with all of it (a fused segment's strip,
  // which computed the rows its device's later layers read) feeds it
  // alone; else the owned parts of the holders cover it.
  for (const auto& h : d.holders) {
    if (d.kind != Dist::kParts || h.task < 0 || DeviceOfTask(h.task) != dev ||
        h.owned == h.region || !Contains(h.region, want)) {
      continue;
    }
    plan_.transfers.push_back(
        Transfer{Endpoint{h.task, NameIn(h, tensor), want.RelativeTo(h.region)},
                 Endpoint{task, tensor, Region::Full(want.extent())},
                 Merge::kCopy, consumer_layer});
    return plan_.tasks[task].fragment.AddInput(tensor, want.extent());
  }
  int64_t covered = 0;
  bool remote = false;
  for (const auto& h : d.holders) {
    if (h.owned.empty()) continue;
    auto cut = Intersect(h.owned, want);
    if (!cut) continue;
    // A whole holder feeds everything; stop after it.
    covered += cut->elements();
    remote |= h.task >= 0 && DeviceOfTask(h.task) != dev;
    plan_.transfers.push_back(
        Transfer{Endpoint{h.task, NameIn(h, tensor), cut->RelativeTo(h.region)},
                 Endpoint{task, tensor, cut->RelativeTo(want)}, Merge::kCopy,
                 d.kind == Dist::kWhole ? consumer_layer : layer});
    if (d.kind == Dist::kWhole) break;
  }
  if (covered != want.elements()) {
    return Internal("the parts of " + tensor + " do not cover " +
                    want.ToString());
  }
  if (remote && single) received_[{tensor, dev}].push_back(Holder{task, want});
  return plan_.tasks[task].fragment.AddInput(tensor, want.extent());
}

const std::string& PlanBuilder::NameIn(const Holder& h, const std::string& t) {
  return h.tensor.empty() ? t : h.tensor;
}

bool PlanBuilder::ComputedIn(int t, const std::string& name) const {
  const Graph& f = plan_.tasks[t].fragment;
  return f.FindTensor(name) != nullptr &&
         std::find(f.inputs.begin(), f.inputs.end(), name) == f.inputs.end();
}

bool PlanBuilder::HeldIn(int t, const std::string& name) const {
  return ComputedIn(t, name) ||
         (reducers_.count(t) && plan_.tasks[t].fragment.FindTensor(name));
}

Status PlanBuilder::AddPartNode(int t, const Node& n, const Region& out) {
  Node part = n;
  if (SplitFactsOf(part.op).relayout && part.attrs.Has("shape")) {
    part.attrs.Set("shape", out.extent());
  }
  if (SplitFactsOf(part.op).crops) {
    // A part inside the box is output whole: the box of the part.
    const Shape extent = out.extent();
    std::vector<int64_t> axes(extent.size());
    for (size_t a = 0; a < axes.size(); ++a) axes[a] = static_cast<int64_t>(a);
    part.attrs.Set("starts", std::vector<int64_t>(extent.size(), 0));
    part.attrs.Set("ends", std::vector<int64_t>(extent.begin(), extent.end()));
    part.attrs.Set("axes", axes);
    part.attrs.Set("steps", std::vector<int64_t>(extent.size(), 1));
  }
  return plan_.tasks[t].fragment.AddNode(part);
}

std::optional<Region> PlanBuilder::LocalBox(const std::string& tensor,
                                            int device,
                                            const Region& want) const {
  const Shape& s = ShapeOf(tensor);
  if (s.size() < 4) return std::nullopt;
  std::vector<Region> mine;
  for (const auto& h : dist_.at(tensor).holders) {
    if (h.task < 0 || DeviceOfTask(h.task) != device ||
        h.region.begin.size() != s.size()) {
      continue;
    }
    bool box = true;
    for (size_t a = 0; a < s.size(); ++a) {
      if (a != 2 && a != 3 &&
          (h.region.begin[a] != 0 || h.region.end[a] != s[a]))
        box = false;
    }
    if (box) mine.push_back(h.region);
  }
  if (mine.empty()) return std::nullopt;
  // The bounding box of them all, if they fill it (holders of one tensor
  // do not overlap); else the single one that overlaps `want` most.
  Region bound = mine[0];
  int64_t filled = 0;
  for (const Region& r : mine) {
    for (int a : {2, 3}) {
      bound.begin[a] = std::min(bound.begin[a], r.begin[a]);
      bound.end[a] = std::max(bound.end[a], r.end[a]);
    }
    filled += r.elements();
  }
  if (filled == bound.elements()) return bound;
  std::optional<Region> best;
  int64_t best_overlap = 0;
  for (const Region& r : mine) {
    auto x = Intersect(r, want);
    if (x && x->elements() > best_overlap) {
      best = r;
      best_overlap = x->elements();
    }
  }
  return best;
}

}  // namespace plan_build
}  // namespace shoal
