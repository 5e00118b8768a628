// An fc layer split by its inputs where they already lie (partition/
// plan_builder_impl.h PlaceFcOnBoxes): each box of the feature map it reads
// flattened is multiplied by the weight's columns for that box, read
// through a view of the weight (plan/plan.h WeightSlice::view).
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "partition/layer_split.h"
#include "partition/plan_builder_impl.h"

namespace shoal {
namespace plan_build {

namespace {

// What one device holds of the map: its holders (copies: placing tasks may
// change dist_) and the box they fill.
struct DeviceBox {
  std::vector<Holder> holders;
  Region box;
};

// The bounding box of the holders' owned boxes, if they fill it exactly (boxes
// of one tensor's owned parts do not overlap, so their elements add up to it
// only then).
std::optional<Region> FilledBound(const std::vector<Holder>& hs) {
  Region bound = hs[0].owned;
  int64_t sum = 0;
  for (const Holder& h : hs) {
    for (int a = 0; a < bound.rank(); ++a) {
      bound.begin[a] = std::min(bound.begin[a], h.owned.begin[a]);
      bound.end[a] = std::max(bound.end[a], h.owned.end[a]);
    }
    sum += h.owned.elements();
  }
  if (sum != bound.elements()) return std::nullopt;
  return bound;
}

}  // namespace

StatusOr<bool> PlanBuilder::PlaceFcOnBoxes(const Node& n) {
  if (!SplitFactsOf(n.op).relayout || n.inputs.empty() ||
      n.outputs.size() != 1 || req_.placement.count(n.name) ||
      req_.layers.count(n.name)) {
    return false;
  }
  const std::string& in = n.inputs[0];
  const std::string& flat = n.outputs[0];
  auto it = dist_.find(in);
  if (it == dist_.end() || it->second.kind != Dist::kParts) return false;
  const Shape& x = ShapeOf(in);
  const Shape& y = ShapeOf(flat);
  // [N, ...] flattened to [N, features]: a feature is one element of a
  // sample's map, so a box of the map is a set of features.
  if (x.size() < 3 || y.size() != 2 || y[0] != x[0] ||
      y[1] != NumElements(x) / std::max<int64_t>(x[0], 1)) {
    return false;
  }
  // The reader, past single-input elementwise ops (a dropout).
  std::vector<const Node*> between;
  const Node* c = ReaderPastElementwise(flat, &between);
  if (c == nullptr) return false;
  auto lc = req_.layers.find(c->name);
  if (lc == req_.layers.end() || !IsInputSplit(lc->second.scheme) ||
      lc->second.scheme == Scheme::kFuse2 || !IsFcLayer(g_, *c)) {
    return false;
  }
  const WeightLayout layout = WeightLayoutOf(*c);
  const std::string& weight = c->inputs[1];
  const Shape& ws = ShapeOf(weight);
  if (!layout.plain() || layout.feature_map || layout.in_axis < 0 ||
      layout.in_axis >= static_cast<int>(ws.size()) ||
      ws[layout.in_axis] != y[1]) {
    return false;
  }
  // Each device's boxes, which must span the batch and fill one box.
  std::map<int, DeviceBox> by_device;
  int64_t held = 0;
  for (const auto& h : it->second.holders) {
    if (h.owned.rank() == 0) continue;  // serves its own device only
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1 ||
        h.owned.rank() != static_cast<int>(x.size())) {
      return false;
    }
    if (h.owned.begin[0] != 0 || h.owned.end[0] != x[0]) return false;
    by_device[DeviceOfTask(h.task)].holders.push_back(h);
    held += h.owned.elements();
  }
  if (held != NumElements(x) || by_device.size() < 2) return false;
  std::vector<int> group;
  std::vector<double> gshares;
  RETURN_IF_ERROR(
      Group(lc->second.devices, "layer " + c->name, &group, &gshares));
  for (auto& [dev, b] : by_device) {
    if (std::find(group.begin(), group.end(), dev) == group.end()) {
      return false;  // the layer was given other devices
    }
    auto bound = FilledBound(b.holders);
    if (!bound) return false;
    b.box = *bound;
  }
  // The weight's input axis read as the map's axes after the batch.
  Shape view;
  for (int a = 0; a < static_cast<int>(ws.size()); ++a) {
    if (a != layout.in_axis) {
      view.push_back(ws[a]);
    } else {
      view.insert(view.end(), x.begin() + 1, x.end());
    }
  }
  const Shape& out_shape = ShapeOf(c->outputs[0]);
  Dist out{Dist::kPartials, {}, c->name};
  bool first = true;
  for (const auto& [dev, b] : by_device) {
    // The task that holds the box, or a new one on its device that takes
    // it from there (rows it computed beyond its own, or several tasks).
    const Holder& h = b.holders[0];
    int t = h.task;
    if (b.holders.size() != 1 || !(h.owned == h.region) || !h.tensor.empty() ||
        !HeldIn(t, in)) {
      t = NewTask(c->name + "/box@" + std::to_string(dev), {dev}, c->name,
                  lc->second.scheme);
      RETURN_IF_ERROR(Need(t, in, b.box, c->name));
    }
    const int64_t features = b.box.elements() / x[0];
    RETURN_IF_ERROR(AddPartNode(t, n, Region::Full({x[0], features})));
    for (const Node* e : between) {
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(*e));
    }
    // The columns (or rows) of the weight that multiply this box.
    WeightSlice w{weight, weight, Region::Full(view), view};
    for (size_t a = 1; a < x.size(); ++a) {
      const size_t va = layout.in_axis + a - 1;
      w.region.begin[va] = b.box.begin[a];
      w.region.end[va] = b.box.end[a];
    }
    Shape slice = ws;
    slice[layout.in_axis] = features;
    Task& task = plan_.tasks[t];
    RETURN_IF_ERROR(task.fragment.AddWeight(weight, slice));
    task.weights.push_back(w);
    Node part = *c;
    // Exactly one part adds the bias.
    if (part.inputs.size() > 2 && !part.inputs[2].empty()) {
      if (first) {
        const std::string& bias = part.inputs[2];
        RETURN_IF_ERROR(task.fragment.AddWeight(bias, ShapeOf(bias)));
        task.weights.push_back(
            WeightSlice{bias, bias, Region::Full(ShapeOf(bias))});
      } else {
        part.inputs.resize(2);
      }
    }
    RETURN_IF_ERROR(task.fragment.AddNode(part));
    out.holders.push_back(Holder{t, Region::Full(out_shape)});
    first = false;
  }
  placed_.insert(n.name);
  for (const Node* e : between) placed_.insert(e->name);
  placed_.insert(c->name);
  dist_[c->outputs[0]] = std::move(out);
  const std::string where =
      " on each device's box of " + in + ", where the box lies";
  notes_[n.name] = LayerDecision{n.name, "parts", n.op + where};
  for (const Node* e : between) {
    notes_[e->name] = LayerDecision{e->name, "parts", e->op + where};
  }
  notes_[c->name] = LayerDecision{
      c->name, SchemeName(lc->second.scheme),
      "input splitting where the inputs lie: each device multiplies its box "
      "of " +
          in + " (flattened) by the weight's " +
          (layout.in_axis == 1 ? "columns" : "rows") +
          " for that box, and the partial sums are added up; no message "
          "regroups the boxes first"};
  return true;
}

}  // namespace plan_build
}  // namespace shoal
