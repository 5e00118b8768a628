// Nodes that run where their input's parts already are, instead of
// gathering it: concats of parts, per-channel ops on slices, elementwise
// ops on strips, the relayout before a layer split by inputs (PlanBuilder).
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/op_registry.h"
#include "partition/layer_split.h"
#include "partition/model_chain.h"
#include "partition/plan_builder_impl.h"
#include "partition/split_counts.h"

namespace shoal {
namespace plan_build {

StatusOr<bool> PlanBuilder::PlaceConcatOfParts(const Node& n) {
  if (!Concatenates(n) || n.outputs.size() != 1 || n.inputs.empty() ||
      !n.attrs.Has("axis")) {
    return false;
  }
  const Shape& shape = ShapeOf(n.outputs[0]);
  const int64_t rank = static_cast<int64_t>(shape.size());
  int64_t axis = n.attrs.GetInt("axis");
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return false;
  Dist out{Dist::kParts, {}, ""};
  std::set<int> devices;
  int64_t offset = 0;
  for (const auto& in : n.inputs) {
    auto it = dist_.find(in);
    if (in.empty() || g_.tensors.at(in).is_weight() || it == dist_.end() ||
        it->second.kind == Dist::kPartials) {
      return false;
    }
    for (const auto& h : it->second.holders) {
      if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) {
        return false;
      }
      Holder moved{h.task, h.region, NameIn(h, in)};
      moved.region.begin[axis] += offset;
      moved.region.end[axis] += offset;
      moved.owned = moved.region;
      out.holders.push_back(std::move(moved));
      devices.insert(DeviceOfTask(h.task));
      if (it->second.kind == Dist::kWhole) break;  // one holder has it all
    }
    if (out.layer.empty()) out.layer = it->second.layer;
    offset += ShapeOf(in)[axis];
  }
  if (devices.size() < 2) return false;  // one device: the node is as good
  if (out.layer.empty()) out.layer = n.name;
  dist_[n.outputs[0]] = std::move(out);
  placed_.insert(n.name);
  notes_[n.name] = LayerDecision{
      n.name, "parts",
      "a concat of tensors on " + std::to_string(devices.size()) +
          " devices: its readers take their regions from where the inputs "
          "are, without gathering them"};
  return true;
}

bool PlanBuilder::ChannelLocal(const Node& n) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || n.outputs.size() != 1) return false;
  return s->elementwise() || ActsPerChannel(n) || SplitFactsOf(n.op).relayout;
}

bool PlanBuilder::PoolsPerChannel(const Node& n) {
  return SplitFactsOf(n.op).per_channel && n.outputs.size() == 1;
}

StatusOr<bool> PlanBuilder::PlaceAlongSlices(const Node& n) {
  std::string in;
  for (const auto& i : n.inputs) {
    if (i.empty() || g_.tensors.at(i).is_weight()) return false;
    if (!in.empty()) return false;
    in = i;
  }
  auto it = dist_.find(in);
  if (in.empty() || n.outputs.size() != 1 || it == dist_.end() ||
      it->second.kind != Dist::kParts) {
    return false;
  }
  const Shape& from = ShapeOf(in);
  const Shape& to = ShapeOf(n.outputs[0]);
  const bool relayout = SplitFactsOf(n.op).relayout;
  if (!relayout && !(ActsPerChannel(n) && from.size() == to.size() &&
                     from.size() >= 2 && from[1] == to[1])) {
    return false;
  }
  const Dist split = it->second;
  std::vector<Region> regions;
  for (const auto& h : split.holders) {
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) return false;
    if (relayout) {
      auto m = MapThroughReshape(h.region, from, to);
      if (!m) return false;
      regions.push_back(*m);
    } else {
      for (size_t a = 0; a < from.size(); ++a) {
        if (a != 1 && (h.region.begin[a] != 0 || h.region.end[a] != from[a]))
          return false;
      }
      Region o = Region::Full(to);
      o.begin[1] = h.region.begin[1];
      o.end[1] = h.region.end[1];
      regions.push_back(o);
    }
  }
  Dist out{Dist::kParts, {}, split.layer};
  for (size_t k = 0; k < split.holders.size(); ++k) {
    const Holder& h = split.holders[k];
    int t = h.task;
    if (!HeldIn(t, in) || !h.tensor.empty()) {
      const int dev = DeviceOfTask(h.task);
      t = NewTask(n.name + "/slice@" + std::to_string(dev), {dev}, "",
                  whole_scheme_);
      RETURN_IF_ERROR(Need(t, in, h.region, n.name));
    }
    RETURN_IF_ERROR(AddPartNode(t, n, regions[k]));
    out.holders.push_back(Holder{t, regions[k]});
  }
  dist_[n.outputs[0]] = std::move(out);
  placed_.insert(n.name);
  notes_[n.name] = LayerDecision{n.name, "parts",
                                 n.op + " runs on each channel slice of " + in +
                                     " on the device that holds it"};
  return true;
}

const Node* PlanBuilder::ReaderPastElementwise(
    const std::string& tensor, std::vector<const Node*>* between) const {
  for (std::string cur = tensor;;) {
    const auto cons = g_.ConsumerIndices(cur);
    if (cons.size() != 1 || cur == plan_.output_name) return nullptr;
    const Node& next = g_.nodes[cons[0]];
    if (next.inputs.empty() || next.inputs[0] != cur) return nullptr;
    const OpSchema* sc = OpRegistry::Global().Find(next.op);
    const bool passes = sc != nullptr && sc->elementwise() &&
                        next.inputs.size() == 1 && next.outputs.size() == 1 &&
                        !req_.layers.count(next.name) &&
                        !req_.placement.count(next.name);
    if (!passes) return &next;
    if (between != nullptr) between->push_back(&next);
    cur = next.outputs[0];
  }
}

StatusOr<bool> PlanBuilder::PlaceRelayoutForInputSplit(const Node& n) {
  // A planner that placed the flatten itself (the MILP) priced that.
  const bool relayout = SplitFactsOf(n.op).relayout;
  if (!(relayout || PoolsPerChannel(n)) || n.inputs.empty() ||
      n.outputs.size() != 1 || req_.placement.count(n.name)) {
    return false;
  }
  const std::string& in = n.inputs[0];
  auto it = dist_.find(in);
  if (it == dist_.end() || it->second.kind != Dist::kParts) return false;
  // A pool goes with the flatten that alone reads it.
  std::string flat = n.outputs[0];
  if (!relayout) {
    const auto cons = g_.ConsumerIndices(flat);
    if (cons.size() != 1 || flat == plan_.output_name) return false;
    const Node& f = g_.nodes[cons[0]];
    if (!SplitFactsOf(f.op).relayout || f.outputs.size() != 1 ||
        f.inputs.empty() || f.inputs[0] != flat || req_.layers.count(f.name) ||
        req_.placement.count(f.name)) {
      return false;
    }
    flat = f.outputs[0];
  }
  // The reader, past elementwise ops (a dropout) that run on the slices.
  const Node* c = ReaderPastElementwise(flat, nullptr);
  if (c == nullptr) return false;
  auto lc = req_.layers.find(c->name);
  if (lc == req_.layers.end() || !IsInputSplit(lc->second.scheme)) {
    return false;
  }
  std::vector<int> group;
  std::vector<double> gshares;
  RETURN_IF_ERROR(
      Group(lc->second.devices, "layer " + c->name, &group, &gshares));
  const Shape& from = ShapeOf(in);
  const Shape& to = ShapeOf(flat);
  if (to.size() != 2 || InputSplitSize(g_, *c) != to[1]) return false;
  const int64_t units = InputUnits(g_, *c);
  auto counts = SplitCounts(units, gshares);
  if (!counts.ok() || units <= 0 || to[1] % units != 0) return false;
  const int64_t per = to[1] / units;
  // The pool's output, whose channels are the units.
  const Shape& pooled = ShapeOf(n.outputs[0]);
  if (!relayout && (pooled.size() < 3 || pooled[1] != units ||
                    from.size() != pooled.size() || from[1] != units)) {
    return false;
  }
  std::vector<Region> outs, ins;
  int64_t b = 0;
  for (int64_t k : counts.value()) {
    if (k < 1) return false;
    if (relayout) {
      Region o = Region::Full(to);
      o.begin[1] = b * per;
      o.end[1] = (b + k) * per;
      auto m = MapThroughReshape(o, to, from);
      if (!m) return false;
      outs.push_back(o);
      ins.push_back(*m);
    } else {
      Region o = Region::Full(pooled), i = Region::Full(from);
      o.begin[1] = i.begin[1] = b;
      o.end[1] = i.end[1] = b + k;
      outs.push_back(o);
      ins.push_back(i);
    }
    b += k;
  }
  const std::string layer = it->second.layer;
  Dist out{Dist::kParts, {}, layer};
  for (size_t k = 0; k < group.size(); ++k) {
    const int t = NewTask(n.name + "/slice@" + std::to_string(group[k]),
                          {group[k]}, "", whole_scheme_);
    RETURN_IF_ERROR(Need(t, in, ins[k], c->name));
    RETURN_IF_ERROR(AddPartNode(t, n, outs[k]));
    out.holders.push_back(Holder{t, outs[k]});
  }
  dist_[n.outputs[0]] = std::move(out);
  placed_.insert(n.name);
  notes_[n.name] = LayerDecision{
      n.name, "parts",
      n.op + " runs on each device of " + c->name +
          "'s input split, on the channels of " + in +
          " its slice reads, gathered from the devices that hold them" +
          (relayout ? "" : "; the flatten after it rides along")};
  return true;
}

StatusOr<bool> PlanBuilder::PlaceAlongParts(const Node& n) {
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->elementwise() || n.outputs.size() != 1) {
    return false;
  }
  const Shape& shape = ShapeOf(n.outputs[0]);
  const Dist* parts = nullptr;
  for (const auto& in : n.inputs) {
    if (in.empty()) return false;
    const TensorInfo& t = g_.tensors.at(in);
    auto it = dist_.find(in);
    if (t.is_weight() || t.shape != shape || it == dist_.end() ||
        it->second.kind == Dist::kPartials) {
      return false;  // partial sums are added up whole (MergePartials)
    }
    // Of several split inputs, the one whose parts hold least: a fused
    // segment's shortcut holds more rows than the block's branch, which
    // computed only the rows the sum needs (their parts are the same
    // elsewhere).
    if (it->second.kind == Dist::kParts &&
        (parts == nullptr || HeldElements(it->second) < HeldElements(*parts))) {
      parts = &it->second;
    }
  }
  if (parts == nullptr) return false;
  for (const auto& h : parts->holders) {
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1) return false;
  }
  Dist out{Dist::kParts, {}, parts->layer};
  const Dist split = *parts;  // Need below may change dist_
  for (const auto& h : split.holders) {
    int t = h.task;
    for (const auto& in : n.inputs) {
      if (!HeldIn(h.task, in)) t = -1;
    }
    if (t < 0) {
      const int dev = DeviceOfTask(h.task);
      t = NewTask(n.name + "/parts@" + std::to_string(dev), {dev}, "",
                  whole_scheme_);
      for (const auto& in : n.inputs) {
        RETURN_IF_ERROR(Need(t, in, h.region, n.name));
      }
    }
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(n));
    out.holders.push_back(Holder{t, h.region});
    out.holders.back().owned = h.owned;
  }
  dist_[n.outputs[0]] = out;
  placed_.insert(n.name);
  notes_[n.name] =
      LayerDecision{n.name, "parts",
                    n.op + " is elementwise, so it runs on each part of " +
                        n.inputs[0] + " on the device that holds it"};
  return true;
}

}  // namespace plan_build
}  // namespace shoal
