// Nodes of a window-attention model on boxes of whole windows
// (BuildRequest::windows): each device computes its box of every map of a
// grid and whatever its box maps to in between (the windows' tokens, their
// heads' products, the MLP's rows); a box that reads rows or columns it
// does not hold (a shift of the windows, a patch merging across two boxes)
// receives only those (PlanBuilder).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "graph/op_registry.h"
#include "partition/plan_builder_impl.h"
#include "partition/region_maps.h"

namespace shoal {
namespace plan_build {

namespace {

bool IsFull(const Region& r, const Shape& s, size_t axis) {
  return r.begin[axis] == 0 && r.end[axis] == s[axis];
}

Region Empty(const Shape& s) {
  Region r = Region::Full(s);
  r.end = r.begin;
  return r;
}

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The box of a tensor of shape `from` broadcast (numpy rules) to `to` that
// the box `out` of `to` reads: its own range where the axis is there,
// index 0 where it is 1.
Region BroadcastBox(const Region& out, const Shape& to, const Shape& from) {
  Region r = Region::Full(from);
  const size_t off = to.size() - from.size();
  for (size_t a = 0; a < from.size(); ++a) {
    if (from[a] == 1) continue;
    r.begin[a] = out.begin[a + off];
    r.end[a] = out.end[a + off];
  }
  return r;
}

bool Broadcasts(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  const size_t off = to.size() - from.size();
  for (size_t a = 0; a < from.size(); ++a) {
    if (from[a] != 1 && from[a] != to[a + off]) return false;
  }
  return true;
}

}  // namespace

const WindowGrid* PlanBuilder::GridOf(const Shape& s) const {
  if (s.size() != 4 || s[0] != 1) return nullptr;
  for (const auto& g : req_.windows) {
    if (g.height == s[1] && g.width == s[2]) return &g;
  }
  return nullptr;
}

std::optional<Region> PlanBuilder::WindowPartOutput(
    const Node& n, const std::vector<std::string>& acts,
    const std::vector<Region>& ins) const {
  const SplitFacts& f = SplitFactsOf(n.op);
  const Shape& from = ShapeOf(acts[0]);
  const Shape& to = ShapeOf(n.outputs[0]);
  if (acts.size() == 1 && f.strided_crops) {
    // The outputs whose input index lies in the part: possibly none.
    auto c = StridedCropOf(n, from);
    if (!c) return std::nullopt;
    Region out = Region::Full(to);
    for (size_t a = 0; a < from.size(); ++a) {
      const int64_t lo = CeilDiv(
          std::max<int64_t>(0, ins[0].begin[a] - c->begin[a]), c->step[a]);
      const int64_t hi = CeilDiv(
          std::max<int64_t>(0, ins[0].end[a] - c->begin[a]), c->step[a]);
      out.begin[a] = std::min(lo, c->count[a]);
      out.end[a] = std::min(hi, c->count[a]);
      if (out.end[a] <= out.begin[a]) return Empty(to);
    }
    return out;
  }
  if (acts.size() == 1 && f.selects) {
    auto axis = SelectedAxisOf(n, static_cast<int64_t>(from.size()));
    if (!axis || !IsFull(ins[0], from, *axis)) return std::nullopt;
    const size_t picked = to.size() + 1 - from.size();  // its indices' rank
    Region out = Region::Full(to);
    for (size_t a = 0; a < from.size(); ++a) {
      if (a == static_cast<size_t>(*axis)) continue;
      const size_t o = a < static_cast<size_t>(*axis) ? a : a + picked - 1;
      out.begin[o] = ins[0].begin[a];
      out.end[o] = ins[0].end[a];
    }
    return out;
  }
  // A dense layer on rows of features: its rows, every output column.
  const WeightLayout l = WeightLayoutOf(n);
  if (acts.size() == 1 && l.plain() && !l.feature_map && from.size() == 2 &&
      to.size() == 2 && n.inputs.size() >= 2 && n.inputs[0] == acts[0] &&
      g_.tensors.at(n.inputs[1]).is_weight()) {
    if (!IsFull(ins[0], from, 1)) return std::nullopt;
    Region out = Region::Full(to);
    out.begin[0] = ins[0].begin[0];
    out.end[0] = ins[0].end[0];
    return out;
  }
  const OpSchema* schema = OpRegistry::Global().Find(n.op);
  if (schema != nullptr && schema->elementwise()) {
    // Inputs of the output's shape read the same box; constants
    // broadcast along it are cut to it (AddWindowNode).
    for (size_t k = 0; k < acts.size(); ++k) {
      if (ShapeOf(acts[k]) != to || !(ins[k] == ins[0])) return std::nullopt;
    }
    return ins[0];
  }
  return PartOutput(n, acts, ins);
}

std::optional<std::vector<Region>> PlanBuilder::WindowNeeds(
    const Node& n, const std::vector<std::string>& ins,
    const Region& out) const {
  const SplitFacts& f = SplitFactsOf(n.op);
  const Shape& to = ShapeOf(n.outputs[0]);
  const OpSchema* schema = OpRegistry::Global().Find(n.op);
  std::vector<Region> need;
  if (schema != nullptr && schema->elementwise()) {
    for (const auto& in : ins) {
      if (!Broadcasts(ShapeOf(in), to)) return std::nullopt;
      need.push_back(BroadcastBox(out, to, ShapeOf(in)));
    }
    return need;
  }
  if (Concatenates(n)) {
    const int64_t rank = static_cast<int64_t>(to.size());
    int64_t axis = n.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return std::nullopt;
    int64_t off = 0;
    for (const auto& in : ins) {
      const Shape& s = ShapeOf(in);
      Region r = out;
      r.begin[axis] = std::clamp<int64_t>(out.begin[axis] - off, 0, s[axis]);
      r.end[axis] = std::clamp<int64_t>(out.end[axis] - off, 0, s[axis]);
      if (r.end[axis] <= r.begin[axis]) r = Empty(s);
      need.push_back(r);
      off += s[axis];
    }
    return need;
  }
  if (ins.size() != 1) return std::nullopt;
  const Shape& from = ShapeOf(ins[0]);
  if (f.strided_crops) {
    auto c = StridedCropOf(n, from);
    if (!c) return std::nullopt;
    Region r = Region::Full(from);
    for (size_t a = 0; a < from.size(); ++a) {
      // To the next step's start where the input has it: an even box for
      // x[0::2], which is cheaper to view than an odd one.
      r.begin[a] = c->begin[a] + out.begin[a] * c->step[a];
      r.end[a] = std::min(from[a], c->begin[a] + out.end[a] * c->step[a]);
    }
    return std::vector<Region>{r};
  }
  if (f.relayout) {
    auto r = MapBoxThroughReshape(out, to, from);
    if (!r) return std::nullopt;
    return std::vector<Region>{*r};
  }
  if (f.permutes) {
    auto perm = AxisPermutationOf(n, static_cast<int64_t>(from.size()));
    if (!perm || from.size() != to.size()) return std::nullopt;
    Region r = Region::Full(from);
    for (size_t i = 0; i < perm->size(); ++i) {
      r.begin[(*perm)[i]] = out.begin[i];
      r.end[(*perm)[i]] = out.end[i];
    }
    return std::vector<Region>{r};
  }
  if (f.non_reduced && from == to) {
    auto axes = ReducedAxesOf(n, static_cast<int64_t>(from.size()));
    if (!axes) return std::nullopt;
    for (int64_t a : *axes) {
      if (!IsFull(out, to, static_cast<size_t>(a))) return std::nullopt;
    }
    return std::vector<Region>{out};
  }
  return std::nullopt;
}

std::optional<Region> PlanBuilder::LocalRegion(
    int t, const std::string& tensor) const {
  if (!plan_.tasks[t].fragment.FindTensor(tensor)) return std::nullopt;
  auto r = window_local_.find({t, tensor});
  if (r != window_local_.end()) return r->second;
  auto it = dist_.find(tensor);
  if (it == dist_.end()) return std::nullopt;
  for (const auto& h : it->second.holders) {
    if (h.task == t && h.tensor.empty()) return h.region;
  }
  return std::nullopt;
}

Status PlanBuilder::AddWindowNode(int t, const Node& n,
                                  const std::vector<std::string>& ins,
                                  const std::vector<Region>& need,
                                  const Region& out) {
  Task& task = plan_.tasks[t];
  Node part = n;
  part.inputs.clear();
  const SplitFacts& f = SplitFactsOf(n.op);
  size_t k = 0;
  for (const auto& in : n.inputs) {
    if (in.empty() || g_.tensors.at(in).is_weight()) {
      part.inputs.push_back(in);
      continue;
    }
    const size_t i = k++;
    if (need[i].empty()) continue;  // a concat's input its part does not read
    auto local = LocalRegion(t, in);
    if (!local) return Internal("task " + task.name + " lacks " + in);
    if (*local == need[i] || f.strided_crops) {
      part.inputs.push_back(in);
      continue;
    }
    // It holds more of the tensor than this node reads: cut the box out.
    if (!Contains(*local, need[i])) {
      return Internal("task " + task.name + " holds " + local->ToString() +
                      " of " + in + ", not " + need[i].ToString());
    }
    Node cut;
    cut.op = "Slice";
    cut.name = n.name + "/cut" + std::to_string(i);
    const Region rel = need[i].RelativeTo(*local);
    std::vector<int64_t> axes(rel.begin.size());
    for (size_t a = 0; a < axes.size(); ++a) axes[a] = static_cast<int64_t>(a);
    cut.attrs.Set("starts", rel.begin);
    cut.attrs.Set("ends", rel.end);
    cut.attrs.Set("axes", axes);
    cut.inputs = {in};
    cut.outputs = {cut.name};
    RETURN_IF_ERROR(task.fragment.AddNode(cut));
    part.inputs.push_back(cut.name);
  }
  if (f.relayout && part.attrs.Has("shape")) {
    part.attrs.Set("shape", out.extent());
  }
  if (f.strided_crops) {
    // The same elements, counted from the task's box of the input.
    const Shape& from = ShapeOf(ins[0]);
    auto c = StridedCropOf(n, from);
    auto local = LocalRegion(t, ins[0]);
    if (!c || !local) return Internal("node " + n.name + " lost its crop");
    std::vector<int64_t> starts, ends, axes, steps;
    for (size_t a = 0; a < from.size(); ++a) {
      const int64_t first = c->begin[a] + out.begin[a] * c->step[a];
      const int64_t last = c->begin[a] + (out.end[a] - 1) * c->step[a];
      starts.push_back(first - local->begin[a]);
      ends.push_back(last - local->begin[a] + 1);
      axes.push_back(static_cast<int64_t>(a));
      steps.push_back(c->step[a]);
    }
    part.attrs.Set("starts", starts);
    part.attrs.Set("ends", ends);
    part.attrs.Set("axes", axes);
    part.attrs.Set("steps", steps);
  }
  // Weights: whole, but for a constant an elementwise node broadcasts over
  // the split axes (Swin's per-window attention mask): its box of them.
  const OpSchema* schema = OpRegistry::Global().Find(n.op);
  const Shape& to = ShapeOf(n.outputs[0]);
  std::vector<WeightSlice> ws;
  for (const auto& w : g_.WeightInputs(n)) {
    const Shape& s = ShapeOf(w);
    Region r = Region::Full(s);
    if (schema != nullptr && schema->elementwise() && NumElements(s) > 1 &&
        Broadcasts(s, to)) {
      r = BroadcastBox(out, to, s);
    }
    ws.push_back(WeightSlice{w, w, r});
  }
  RETURN_IF_ERROR(AddWeights(t, ws));
  return task.fragment.AddNode(part);
}

StatusOr<bool> PlanBuilder::PlaceRowsOfBoxes(const Node& n) {
  // n: a map [1, H, W, C] to rows [H * W, C]; then a dense layer on the
  // rows; then its output [H * W, N] back to a map [1, H, W, N].
  if (!SplitFactsOf(n.op).relayout || n.outputs.size() != 1 ||
      n.inputs.empty()) {
    return false;
  }
  const std::string& in = n.inputs[0];
  const Shape& from = ShapeOf(in);
  const Shape& rows = ShapeOf(n.outputs[0]);
  auto it = dist_.find(in);
  if (GridOf(from) == nullptr || it == dist_.end() ||
      it->second.kind != Dist::kParts || rows.size() != 2 ||
      rows[0] != from[1] * from[2] || rows[1] != from[3]) {
    return false;
  }
  auto only_reader = [&](const std::string& t) -> const Node* {
    const auto cons = g_.ConsumerIndices(t);
    if (cons.size() != 1 || t == plan_.output_name) return nullptr;
    const Node& c = g_.nodes[cons[0]];
    if (placed_.count(c.name) || req_.layers.count(c.name) ||
        req_.placement.count(c.name) || c.outputs.size() != 1 ||
        c.inputs.empty() || c.inputs[0] != t) {
      return nullptr;
    }
    return &c;
  };
  const Node* fc = only_reader(n.outputs[0]);
  if (fc == nullptr) return false;
  const WeightLayout l = WeightLayoutOf(*fc);
  if (!l.plain() || l.feature_map || fc->inputs.size() < 2 ||
      !g_.tensors.at(fc->inputs[1]).is_weight()) {
    return false;
  }
  const Shape& cols = ShapeOf(fc->outputs[0]);
  const Node* back = only_reader(fc->outputs[0]);
  if (back == nullptr || !SplitFactsOf(back->op).relayout) return false;
  const Shape& to = ShapeOf(back->outputs[0]);
  if (cols.size() != 2 || cols[0] != rows[0] || to.size() != 4 || to[0] != 1 ||
      to[1] != from[1] || to[2] != from[2] || to[3] != cols[1]) {
    return false;
  }
  const Dist parts = it->second;
  Dist out{Dist::kParts, {}, ""};
  for (const auto& h : parts.holders) {
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1 ||
        !(h.owned == h.region)) {
      return false;
    }
  }
  for (const auto& h : parts.holders) {
    // The box's own rows, in its own order: a box of windows that is not
    // whole rows of the map is no run of the map's rows, but the dense
    // layer reads each row alone and the map comes back box for box.
    int t = h.task;
    if (!(LocalRegion(t, in) == std::optional<Region>(h.region))) {
      const int dev = DeviceOfTask(h.task);
      t = NewTask(n.name + "/windows@" + std::to_string(dev), {dev}, "",
                  whole_scheme_);
      RETURN_IF_ERROR(Need(t, in, h.region, n.name));
      window_local_[{t, in}] = h.region;
    }
    const Shape box = h.region.extent();
    Node flat = n;
    flat.attrs.Set("shape", Shape{box[1] * box[2], box[3]});
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(flat));
    RETURN_IF_ERROR(AddWholeWeights(t, *fc));
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(*fc));
    Node map = *back;
    map.attrs.Set("shape", Shape{1, box[1], box[2], to[3]});
    RETURN_IF_ERROR(AddWholeWeights(t, map));
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(map));
    Region r = h.region;
    r.end[3] = to[3];
    out.holders.push_back(Holder{t, r});
  }
  dist_[back->outputs[0]] = std::move(out);
  for (const Node* x : {&n, fc, back}) {
    placed_.insert(x->name);
    notes_[x->name] = LayerDecision{
        x->name, "windows",
        x->op + " runs on the rows of each device's box of whole windows"};
  }
  return true;
}

StatusOr<bool> PlanBuilder::PlaceInWindows(const Node& n) {
  if (req_.windows.empty() || n.outputs.size() != 1 ||
      req_.placement.count(n.name) || req_.layers.count(n.name)) {
    return false;
  }
  std::vector<std::string> ins;
  for (const auto& in : n.inputs) {
    if (in.empty()) return false;
    if (g_.tensors.at(in).is_weight()) continue;
    auto it = dist_.find(in);
    if (it == dist_.end() || it->second.kind == Dist::kPartials) return false;
    ins.push_back(in);
  }
  if (ins.empty()) return false;
  const Shape& to = ShapeOf(n.outputs[0]);
  struct Part {
    int device;
    Region out;
    std::vector<Region> need;
  };
  std::vector<Part> parts;
  if (const WindowGrid* grid = GridOf(to)) {
    // A map of the grid: each device its band, reading what that needs.
    for (size_t k = 0; k < grid->devices.size(); ++k) {
      const WindowBox& b = grid->boxes[k];
      Region out = Region::Slice(to, 1, b.row_begin, b.row_end);
      out.begin[2] = b.col_begin;
      out.end[2] = b.col_end;
      auto need = WindowNeeds(n, ins, out);
      if (!need) return false;
      parts.push_back(Part{grid->devices[k], out, *need});
    }
  } else {
    // Elsewhere, each device's part of its inputs where they are: the
    // inputs split alike, one part per device; scalars are read whole.
    std::vector<std::string> acts;
    for (const auto& in : ins) {
      const Dist& d = dist_.at(in);
      if (d.kind == Dist::kParts) {
        acts.push_back(in);
      } else if (NumElements(ShapeOf(in)) != 1) {
        return false;
      }
    }
    if (acts.empty()) return false;
    for (const auto& h0 : dist_.at(acts[0]).holders) {
      if (h0.task < 0 || plan_.tasks[h0.task].devices.size() != 1) {
        return false;
      }
      const int dev = DeviceOfTask(h0.task);
      std::vector<Region> held;
      for (const auto& a : acts) {
        const Holder* mine = nullptr;
        for (const auto& h : dist_.at(a).holders) {
          if (h.task < 0 || DeviceOfTask(h.task) != dev) continue;
          if (mine != nullptr || !(h.owned == h.region)) return false;
          mine = &h;
        }
        if (mine == nullptr) return false;
        held.push_back(mine->region);
      }
      auto out = WindowPartOutput(n, acts, held);
      if (!out) return PlaceRowsOfBoxes(n);
      if (out->empty()) continue;
      auto need = WindowNeeds(n, ins, *out);
      Part p{dev, *out, {}};
      size_t k = 0;
      for (size_t j = 0; j < ins.size(); ++j) {
        if (dist_.at(ins[j]).kind != Dist::kParts) {
          p.need.push_back(Region::Full(ShapeOf(ins[j])));
          continue;
        }
        const size_t i = k++;
        Region r = need ? (*need)[j] : held[i];
        if (!r.empty()) {
          // A strided crop's box reaches to its next step: not past the
          // part.
          for (size_t a = 0; a < r.end.size(); ++a) {
            r.end[a] = std::min(r.end[a], held[i].end[a]);
          }
          if (!Contains(held[i], r)) return false;
        }
        p.need.push_back(r);
      }
      parts.push_back(std::move(p));
    }
    if (parts.empty()) return false;
  }
  Dist out{Dist::kParts, {}, ""};
  for (const Part& p : parts) {
    // The latest task on the device holding what the part reads takes it,
    // when its device holds all of that; a part that reads rows of another
    // device's gets a task of its own, so what its device holds goes on
    // while they travel.
    int t = -1;
    bool local = true;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (p.need[i].empty()) continue;
      const Dist& d = dist_.at(ins[i]);
      int holder = -1;
      for (const auto& h : d.holders) {
        if (h.task >= 0 && DeviceOfTask(h.task) == p.device &&
            Contains(h.region, p.need[i])) {
          holder = std::max(holder, h.task);
        }
      }
      if (holder < 0) {
        local = false;
      } else {
        t = std::max(t, holder);
      }
    }
    if (!local || t < 0 || plan_.tasks[t].devices.size() != 1 ||
        !plan_.tasks[t].layer.empty()) {
      t = NewTask(n.name + "/windows@" + std::to_string(p.device), {p.device},
                  "", whole_scheme_);
    }
    for (size_t i = 0; i < ins.size(); ++i) {
      if (p.need[i].empty() || LocalRegion(t, ins[i])) continue;
      // A scalar made of constants alone (attention's scale, a Pow of two
      // constants) is computed here: received from the input device, it
      // would put that device's task on every other device's path.
      const int made = g_.ProducerIndex(ins[i]);
      if (made >= 0 && NumElements(ShapeOf(ins[i])) == 1 &&
          g_.WeightInputs(g_.nodes[made]).size() ==
              g_.nodes[made].inputs.size() &&
          !plan_.tasks[t].fragment.FindTensor(ins[i])) {
        RETURN_IF_ERROR(AddWholeWeights(t, g_.nodes[made]));
        RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(g_.nodes[made]));
        window_local_[{t, ins[i]}] = Region::Full(ShapeOf(ins[i]));
        continue;
      }
      if (plan_.tasks[t].fragment.FindTensor(ins[i])) {
        return Internal("task " + plan_.tasks[t].name + " holds " + ins[i] +
                        " in a box it did not record");
      }
      RETURN_IF_ERROR(Need(t, ins[i], p.need[i], n.name));
      window_local_[{t, ins[i]}] = p.need[i];
    }
    RETURN_IF_ERROR(AddWindowNode(t, n, ins, p.need, p.out));
    out.holders.push_back(Holder{t, p.out});
  }
  dist_[n.outputs[0]] = std::move(out);
  placed_.insert(n.name);
  notes_[n.name] = LayerDecision{
      n.name, "windows",
      n.op +
          " runs on each device's box of whole windows, receiving only "
          "the rows and columns it reads from another's"};
  return true;
}

}  // namespace plan_build
}  // namespace shoal
