// Nodes between attention's projections that run on the heads each device
// holds (BuildRequest::along_heads): reshapes and transposes of whole
// heads, the two MatMuls of activations, Softmax, the scale (PlanBuilder).
#include <algorithm>
#include <optional>
#include <set>
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

}  // namespace

std::optional<Region> PlanBuilder::PartOutput(
    const Node& n, const std::vector<std::string>& acts,
    const std::vector<Region>& ins) const {
  const SplitFacts& f = SplitFactsOf(n.op);
  const OpSchema* schema = OpRegistry::Global().Find(n.op);
  const Shape& from = ShapeOf(acts[0]);
  const Shape& to = ShapeOf(n.outputs[0]);
  const int64_t rank = static_cast<int64_t>(from.size());
  if (acts.size() == 1 && f.relayout) {
    return MapBoxThroughReshape(ins[0], from, to);
  }
  if (acts.size() == 1 && f.crops) {
    // Inside the box (the caller drops the parts outside it).
    auto box = CropOf(n, from);
    if (!box) return std::nullopt;
    Region out = ins[0];
    for (size_t a = 0; a < from.size(); ++a) {
      if (out.begin[a] < box->first[a] || out.end[a] > box->second[a]) {
        return std::nullopt;
      }
      out.begin[a] -= box->first[a];
      out.end[a] -= box->first[a];
    }
    return out;
  }
  if (acts.size() == 1 && f.permutes) {
    auto perm = AxisPermutationOf(n, rank);
    if (!perm || to.size() != from.size()) return std::nullopt;
    return PermuteBox(ins[0], *perm);
  }
  if (acts.size() == 2 && f.batch_product && n.inputs.size() == 2) {
    // A [..., M, K] x B [..., K, N], batch axes alike (no broadcast): each
    // part holds whole matrices of the same batch indices in both.
    const Shape& b = ShapeOf(acts[1]);
    if (rank < 3 || b.size() != from.size() || to.size() != from.size()) {
      return std::nullopt;
    }
    Region out = Region::Full(to);
    for (size_t a = 0; a + 2 < from.size(); ++a) {
      if (from[a] != b[a] || ins[0].begin[a] != ins[1].begin[a] ||
          ins[0].end[a] != ins[1].end[a]) {
        return std::nullopt;
      }
      out.begin[a] = ins[0].begin[a];
      out.end[a] = ins[0].end[a];
    }
    for (size_t a = from.size() - 2; a < from.size(); ++a) {
      if (!IsFull(ins[0], from, a) || !IsFull(ins[1], b, a)) {
        return std::nullopt;
      }
    }
    return out;
  }
  if (acts.size() == 1 && f.non_reduced && from == to) {
    auto axes = ReducedAxesOf(n, rank);
    if (!axes) return std::nullopt;
    for (int64_t a : *axes) {
      if (!IsFull(ins[0], from, static_cast<size_t>(a))) return std::nullopt;
    }
    return ins[0];
  }
  if (schema != nullptr && schema->elementwise()) {
    for (size_t k = 0; k < acts.size(); ++k) {
      if (ShapeOf(acts[k]) != to || !(ins[k] == ins[0])) return std::nullopt;
    }
    return ins[0];
  }
  return std::nullopt;
}

StatusOr<bool> PlanBuilder::PlaceAlongHeads(const Node& n) {
  if (!req_.along_heads || n.outputs.size() != 1 ||
      req_.placement.count(n.name)) {
    return false;
  }
  // Activation inputs all in parts; weights read whole: scalars (the
  // attention scale, GELU's constants) or a normalisation's, which lie
  // along the axes it reduces (LayerNorm's scale and shift).
  std::vector<std::string> acts;
  for (const auto& in : n.inputs) {
    if (in.empty()) return false;
    const TensorInfo& t = g_.tensors.at(in);
    if (t.is_weight()) {
      if (NumElements(t.shape) != 1 && !SplitFactsOf(n.op).non_reduced) {
        return false;
      }
      continue;
    }
    auto it = dist_.find(in);
    if (it == dist_.end() || it->second.kind != Dist::kParts) return false;
    acts.push_back(in);
  }
  if (acts.empty()) return false;
  const size_t parts = dist_.at(acts[0]).holders.size();
  std::vector<std::vector<Region>> ins(parts);
  std::vector<Region> outs;
  // The parts it reads: a crop (one of q, k and v from a packed
  // projection) reads only those inside its box.
  std::vector<size_t> read;
  for (size_t k = 0; k < parts; ++k) {
    if (SplitFactsOf(n.op).crops && acts.size() == 1) {
      auto box = CropOf(n, ShapeOf(acts[0]));
      if (!box) return false;
      const Region& r = dist_.at(acts[0]).holders[k].region;
      bool apart = false;
      for (size_t a = 0; a < box->first.size(); ++a) {
        apart |= r.end[a] <= box->first[a] || r.begin[a] >= box->second[a];
      }
      if (apart) continue;
    }
    read.push_back(k);
  }
  int64_t covered = 0;
  for (size_t k : read) {
    int dev = -1;
    for (const auto& a : acts) {
      const Dist& d = dist_.at(a);
      if (d.holders.size() != parts) return false;
      const Holder& h = d.holders[k];
      if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1 ||
          !(h.owned == h.region)) {
        return false;
      }
      if (dev >= 0 && DeviceOfTask(h.task) != dev) return false;
      dev = DeviceOfTask(h.task);
      ins[k].push_back(h.region);
    }
    auto o = PartOutput(n, acts, ins[k]);
    if (!o) return false;
    covered += o->elements();
    outs.push_back(*o);
  }
  // A crop's parts must make its whole output. Parts of a tensor do not
  // overlap: they cover it when their elements add up to it.
  if (read.empty() || (SplitFactsOf(n.op).crops &&
                       covered != NumElements(ShapeOf(n.outputs[0])))) {
    return false;
  }
  Dist out{Dist::kParts, {}, dist_.at(acts[0]).layer};
  for (size_t i = 0; i < read.size(); ++i) {
    const size_t k = read[i];
    // The latest task holding an input takes the node; the others' parts
    // come to it from the earlier tasks on the same device. A task
    // receives only from earlier ones.
    int t = -1;
    for (const auto& a : acts) {
      const Holder& h = dist_.at(a).holders[k];
      if (h.tensor.empty() && HeldIn(h.task, a)) t = std::max(t, h.task);
    }
    const int dev = DeviceOfTask(dist_.at(acts[0]).holders[k].task);
    if (t < 0) {
      t = NewTask(n.name + "/heads@" + std::to_string(dev), {dev}, "",
                  whole_scheme_);
    }
    for (size_t a = 0; a < acts.size(); ++a) {
      RETURN_IF_ERROR(Need(t, acts[a], ins[k][a], n.name));
    }
    RETURN_IF_ERROR(AddWholeWeights(t, n));
    RETURN_IF_ERROR(AddPartNode(t, n, outs[i]));
    out.holders.push_back(Holder{t, outs[i]});
  }
  dist_[n.outputs[0]] = std::move(out);
  placed_.insert(n.name);
  notes_[n.name] = LayerDecision{
      n.name, "parts",
      n.op + " runs on each device's part of " + acts[0] +
          " (its heads, or its tokens), which maps whole to a part of its "
          "output"};
  return true;
}

StatusOr<bool> PlanBuilder::ReplicateOverParts(const Node& n) {
  if (!req_.along_heads || n.outputs.size() != 1 ||
      req_.placement.count(n.name) || !SplitFactsOf(n.op).non_reduced) {
    return false;
  }
  std::string in;
  for (const auto& i : n.inputs) {
    if (i.empty() || g_.tensors.at(i).is_weight()) continue;
    if (!in.empty()) return false;
    in = i;
  }
  auto it = dist_.find(in);
  if (in.empty() || it == dist_.end() || it->second.kind != Dist::kParts ||
      ShapeOf(in) != ShapeOf(n.outputs[0]) || it->second.holders.size() < 2) {
    return false;
  }
  const Dist parts = it->second;
  std::set<int> devices;
  for (const auto& h : parts.holders) {
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1 ||
        !(h.owned == h.region) ||
        !devices.insert(DeviceOfTask(h.task)).second) {
      return false;
    }
  }
  // The reshapes that read only its output, each the previous one's only
  // reader, with each copy's slice mapped through them.
  std::vector<const Node*> chain = {&n};
  std::vector<std::vector<Region>> owned(1);
  for (const auto& h : parts.holders) owned[0].push_back(h.region);
  for (;;) {
    const std::string& cur = chain.back()->outputs[0];
    const auto cons = g_.ConsumerIndices(cur);
    if (cur == plan_.output_name || cons.size() != 1) break;
    const Node& c = g_.nodes[cons[0]];
    if (!SplitFactsOf(c.op).relayout || placed_.count(c.name) ||
        req_.layers.count(c.name) || req_.placement.count(c.name) ||
        c.outputs.size() != 1) {
      break;
    }
    std::vector<Region> next;
    for (const Region& r : owned.back()) {
      auto m = MapBoxThroughReshape(r, ShapeOf(cur), ShapeOf(c.outputs[0]));
      if (!m) break;
      next.push_back(*m);
    }
    if (next.size() != owned.back().size()) break;
    chain.push_back(&c);
    owned.push_back(std::move(next));
  }
  std::vector<Dist> outs(chain.size(), Dist{Dist::kParts, {}, parts.layer});
  for (size_t k = 0; k < parts.holders.size(); ++k) {
    const int dev = DeviceOfTask(parts.holders[k].task);
    const int t = NewTask(n.name + "/replica@" + std::to_string(dev), {dev}, "",
                          whole_scheme_);
    RETURN_IF_ERROR(Need(t, in, Region::Full(ShapeOf(in)), n.name));
    for (size_t c = 0; c < chain.size(); ++c) {
      RETURN_IF_ERROR(AddWholeWeights(t, *chain[c]));
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(*chain[c]));
      Holder h{t, Region::Full(ShapeOf(chain[c]->outputs[0]))};
      h.owned = owned[c][k];
      outs[c].holders.push_back(std::move(h));
    }
  }
  for (size_t c = 0; c < chain.size(); ++c) {
    dist_[chain[c]->outputs[0]] = std::move(outs[c]);
    placed_.insert(chain[c]->name);
    notes_[chain[c]->name] = LayerDecision{
        chain[c]->name, "parts",
        chain[c]->op + " runs whole on each of the " +
            std::to_string(devices.size()) + " devices that hold slices of " +
            in + ", each gathering the others' slices"};
  }
  return true;
}

}  // namespace plan_build
}  // namespace shoal
