// Layers placed whole on a device group, or split by their outputs or
// their inputs, with the ops that ride along (PlanBuilder).
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

int64_t PlanBuilder::HeldElements(const Dist& d) {
  int64_t n = 0;
  for (const auto& h : d.holders) n += h.region.elements();
  return n;
}

Status PlanBuilder::PlaceWhole(const Node& n, const std::vector<int>& devices) {
  // A channel-local node on partial sums runs where they are summed, one
  // slice per device (reduce-scatter), when the node is placed by default.
  if (req_.reduce_on_peers && ChannelLocal(n) &&
      !req_.placement.count(n.name)) {
    for (const auto& in : n.inputs) {
      if (!in.empty() && dist_.count(in))
        RETURN_IF_ERROR(ScatterPartials(in).status());
    }
  }
  ASSIGN_OR_RETURN(bool windowed, PlaceInWindows(n));
  if (windowed) return Status::Ok();
  ASSIGN_OR_RETURN(bool along, PlaceAlongParts(n));
  if (along) return Status::Ok();
  ASSIGN_OR_RETURN(bool sliced, PlaceAlongSlices(n));
  if (sliced) return Status::Ok();
  ASSIGN_OR_RETURN(bool boxes, PlaceFcOnBoxes(n));
  if (boxes) return Status::Ok();
  ASSIGN_OR_RETURN(bool relaid, PlaceRelayoutForInputSplit(n));
  if (relaid) return Status::Ok();
  ASSIGN_OR_RETURN(bool heads, PlaceAlongHeads(n));
  if (heads) return Status::Ok();
  ASSIGN_OR_RETURN(bool replicated, ReplicateOverParts(n));
  if (replicated) return Status::Ok();
  if (devices.size() == 1) {
    ASSIGN_OR_RETURN(bool spread, PlaceConcatOfParts(n));
    if (spread) return Status::Ok();
  }
  // Partial sums read off the input device are merged first (on the
  // reading device when reductions are on peers, else on the input
  // device): the merge task must come before its reader, which it would
  // not if Need created it after the reader's task.
  if (devices.front() != req_.hub) {
    for (const auto& in : n.inputs) {
      auto it = dist_.find(in);
      if (it != dist_.end() && it->second.kind == Dist::kPartials) {
        RETURN_IF_ERROR(MergePartials(
            in, req_.reduce_on_peers && devices.size() == 1 ? devices.front()
                                                            : req_.hub));
      }
    }
  }
  const int t = WholeTaskFor(n, devices);
  for (const auto& in : n.inputs) {
    if (in.empty() || g_.tensors.at(in).is_weight()) continue;
    RETURN_IF_ERROR(Need(t, in, Region::Full(ShapeOf(in)), n.name));
  }
  RETURN_IF_ERROR(AddWholeWeights(t, n));
  RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(n));
  for (const auto& o : n.outputs) {
    dist_[o] = Dist{Dist::kWhole, {Holder{t, Region::Full(ShapeOf(o))}}, ""};
  }
  placed_.insert(n.name);
  if (req_.placement.empty() && !req_.layers.count(n.name)) {
    notes_[n.name] =
        LayerDecision{n.name, "whole",
                      "runs whole on " + req_.devices[devices[0]].name +
                          " (the input device): " + n.op +
                          " is not split by strategy " + req_.strategy};
  }
  return Status::Ok();
}

std::vector<const Node*> PlanBuilder::Followers(
    const Node& n, std::vector<Region>* regions, std::string* last,
    std::vector<std::vector<Region>>* steps) {
  std::vector<const Node*> out;
  std::string cur = n.outputs[0];
  while (cur != plan_.output_name) {
    auto cons = g_.ConsumerIndices(cur);
    if (cons.size() != 1) break;
    const Node& c = g_.nodes[cons[0]];
    if (placed_.count(c.name) || req_.layers.count(c.name)) break;
    const Shape& from = ShapeOf(cur);
    const Shape& to = ShapeOf(c.outputs[0]);
    std::vector<Region> next;
    for (const auto& r : *regions) {
      if (SplitFactsOf(c.op).relayout) {
        auto m = MapThroughReshape(r, from, to);
        if (!m) break;
        next.push_back(*m);
      } else if (ActsPerChannel(c) && from.size() == to.size() &&
                 from.size() >= 2) {
        // Same channels; pooling changes only the spatial extents.
        Region o = Region::Full(to);
        o.begin[1] = r.begin[1];
        o.end[1] = r.end[1];
        if (from == to) o = r;
        next.push_back(o);
      } else {
        break;
      }
    }
    if (next.size() != regions->size()) break;
    *regions = std::move(next);
    if (steps) steps->push_back(*regions);
    out.push_back(&c);
    cur = c.outputs[0];
  }
  *last = cur;
  return out;
}

Status PlanBuilder::PlaceSplit(const Node& n, const LayerChoice& choice) {
  const Scheme s = choice.scheme;
  const std::string& in = n.inputs[0];
  // Partial sums are added up before the tasks that read them exist, so
  // the merge runs earlier than its readers.
  RETURN_IF_ERROR(ResolvePartials(in));
  std::vector<int> group;
  std::vector<double> gshares;
  RETURN_IF_ERROR(Group(choice.devices, "layer " + n.name, &group, &gshares));
  if (IsOutputSplit(s)) {
    if (choice.rows_as_held && req_.overlap_reductions &&
        choice.segments == 1) {
      ASSIGN_OR_RETURN(bool chunked,
                       PlaceOutputSplitByRows(n, s, group, gshares, choice.unit,
                                              choice.rows_merged));
      if (chunked) return Status::Ok();
    }
    return PlaceOutputSplit(n, s, group, gshares, choice.unit, choice.segments);
  }
  if (!IsInputSplit(s)) {
    return Internal("scheme " + std::string(SchemeName(s)) +
                    " is not a layer split");
  }
  return PlaceInputSplit(n, s, group, gshares);
}

Status PlanBuilder::PlaceOutputSplit(const Node& n, Scheme s,
                                     const std::vector<int>& group,
                                     const std::vector<double>& gshares,
                                     int64_t unit, int64_t segments) {
  const std::string& in = n.inputs[0];
  const int G = static_cast<int>(group.size());
  const int64_t size = OutputSplitSize(g_, n);
  const int64_t seg = segments > 0 ? size / segments : 0;
  auto counts = SplitCounts(unit > 0 ? seg / unit : 0, gshares);
  if (counts.ok() &&
      (segments < 1 || unit < 1 || size % segments != 0 || seg % unit != 0)) {
    counts = InvalidArgument(
        "the outputs are not whole units of " + std::to_string(unit) +
        (segments > 1 ? " in " + std::to_string(segments) + " equal segments"
                      : ""));
  }
  if (!counts.ok()) {
    return counts.status().WithContext(
        "layer " + n.name + " (" + SchemeName(s) + "): its " +
        std::to_string(size) + " outputs cannot be split over " +
        std::to_string(G) + " devices");
  }
  // Part p is device p % G's share of segment p / G.
  std::vector<LayerPart> parts;
  std::vector<Region> regions;
  for (int64_t k = 0; k < segments; ++k) {
    int64_t b = k * seg;
    for (int d = 0; d < G; ++d) {
      const int64_t e = b + counts.value()[d] * unit;
      ASSIGN_OR_RETURN(LayerPart p, SplitOutput(g_, n, b, e));
      regions.push_back(p.out_region);
      parts.push_back(std::move(p));
      b = e;
    }
  }
  std::vector<Region> final_regions = regions;
  std::string final_tensor;
  std::vector<std::vector<Region>> follower_parts;
  auto followers = Followers(n, &final_regions, &final_tensor, &follower_parts);
  Dist out{Dist::kParts, {}, n.name};
  for (size_t p = 0; p < parts.size(); ++p) {
    const int dev = group[p % G];
    std::string name = n.name + "/" + SchemeName(s) + "@" + std::to_string(dev);
    if (segments > 1) name += "#" + std::to_string(p / G);
    const int t = NewTask(name, {dev}, n.name, s);
    RETURN_IF_ERROR(Need(t, in, parts[p].in_region, n.name));
    RETURN_IF_ERROR(AddWeights(t, parts[p].weights));
    RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(parts[p].node));
    for (size_t k = 0; k < followers.size(); ++k) {
      const Node* f = followers[k];
      RETURN_IF_ERROR(AddWholeWeights(t, *f));
      RETURN_IF_ERROR(AddPartNode(t, *f, follower_parts[k][p]));
    }
    out.holders.push_back(Holder{t, final_regions[p]});
  }
  placed_.insert(n.name);
  for (const Node* f : followers) {
    placed_.insert(f->name);
    notes_[f->name] = LayerDecision{
        f->name, SchemeName(s),
        "travels with " + n.name + "'s split: " + f->op +
            " acts on each channel alone, so each device applies it to "
            "its own channels before sending"};
  }
  dist_[final_tensor] = out;
  return Status::Ok();
}

StatusOr<bool> PlanBuilder::PlaceOutputSplitByRows(
    const Node& n, Scheme s, const std::vector<int>& group,
    const std::vector<double>& gshares, int64_t unit, bool merged) {
  const std::string& in = n.inputs[0];
  const Shape& x = ShapeOf(in);
  const Dist di = dist_.at(in);
  const WeightLayout layout = WeightLayoutOf(n);
  if (di.kind != Dist::kParts || x.size() != 2 || !layout.plain() ||
      layout.feature_map) {
    return false;
  }
  int64_t rows = 0;
  for (const auto& h : di.holders) {
    if (h.task < 0 || plan_.tasks[h.task].devices.size() != 1 ||
        !(h.owned == h.region) || h.region.begin[1] != 0 ||
        h.region.end[1] != x[1]) {
      return false;
    }
    rows += h.region.end[0] - h.region.begin[0];
  }
  if (rows != x[0]) return false;  // parts of rows that make the whole
  const int G = static_cast<int>(group.size());
  const int64_t size = OutputSplitSize(g_, n);
  if (unit < 1 || size % unit != 0) return false;
  auto counts = SplitCounts(size / unit, gshares);
  if (!counts.ok()) return false;
  Dist out{Dist::kParts, {}, n.name};
  std::vector<Region> whole;  // each device's part, all rows
  int64_t b = 0;
  for (int d = 0; d < G; ++d) {
    const int64_t e = b + counts.value()[d] * unit;
    ASSIGN_OR_RETURN(LayerPart p, SplitOutput(g_, n, b, e));
    b = e;
    whole.push_back(p.out_region);
    const int dev = group[d];
    // Its own device's rows first, then the rows after them, then those
    // before: at most three tasks, each a run of rows (a task per part
    // would add a task's overhead per device and layer for little more
    // overlap).
    std::vector<std::pair<int64_t, int64_t>> runs;
    int64_t own_b = x[0], own_e = 0;
    for (const auto& h : di.holders) {
      if (DeviceOfTask(h.task) != dev) continue;
      own_b = std::min(own_b, h.region.begin[0]);
      own_e = std::max(own_e, h.region.end[0]);
    }
    if (own_e > own_b) runs.push_back({own_b, own_e});
    if (own_e > own_b && own_e < x[0]) runs.push_back({own_e, x[0]});
    if (own_e > own_b && own_b > 0) runs.push_back({0, own_b});
    if (runs.empty()) runs.push_back({0, x[0]});
    for (const auto& [r0, r1] : runs) {
      Region in_r = p.in_region, out_r = p.out_region;
      in_r.begin[0] = out_r.begin[0] = r0;
      in_r.end[0] = out_r.end[0] = r1;
      const int t =
          NewTask(n.name + "/" + SchemeName(s) + "@" + std::to_string(dev) +
                      " tokens " + std::to_string(in_r.begin[0]) + "-" +
                      std::to_string(in_r.end[0]),
                  {dev}, n.name, s);
      RETURN_IF_ERROR(Need(t, in, in_r, n.name));
      RETURN_IF_ERROR(AddWeights(t, p.weights));
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(p.node));
      out.holders.push_back(Holder{t, out_r});
    }
  }
  placed_.insert(n.name);
  dist_[n.outputs[0]] = std::move(out);
  if (merged) {
    // Each device's runs into one part, where they already are.
    Dist parts{Dist::kParts, {}, n.name};
    for (int d = 0; d < G; ++d) {
      const int t = NewTask(n.name + "/rows@" + std::to_string(group[d]),
                            {group[d]}, "", whole_scheme_);
      RETURN_IF_ERROR(Need(t, n.outputs[0], whole[d], n.name));
      parts.holders.push_back(Holder{t, whole[d]});
    }
    dist_[n.outputs[0]] = std::move(parts);
  }
  return true;
}

Status PlanBuilder::PlaceInputSplit(const Node& n, Scheme s,
                                    const std::vector<int>& group,
                                    const std::vector<double>& gshares) {
  const std::string& in = n.inputs[0];
  const int G = static_cast<int>(group.size());
  // Input split: follow the parts the input already has, so a fused pair
  // needs no communication in between; else split by the devices' shares.
  const int64_t size = InputSplitSize(g_, n);
  std::vector<std::pair<int64_t, int64_t>> ranges;
  const Dist& di = dist_.at(in);
  if (di.kind == Dist::kParts && static_cast<int>(di.holders.size()) == G) {
    for (int d = 0; d < G; ++d) {
      const Region& r = di.holders[d].region;
      if (DeviceOfTask(di.holders[d].task) != group[d]) break;
      bool axis1_only = true;
      for (int a = 0; a < r.rank(); ++a) {
        if (a != 1 && !(r.begin[a] == 0 && r.end[a] == ShapeOf(in)[a])) {
          axis1_only = false;
        }
      }
      if (!axis1_only) break;
      ranges.push_back({r.begin[1], r.end[1]});
    }
    if (static_cast<int>(ranges.size()) != G) ranges.clear();
  }
  if (s == Scheme::kFuse2 && ranges.empty()) {
    return InvalidArgument("layer " + n.name +
                           " is the second of a fused "
                           "pair, but its input is not split by channels or "
                           "features on every device");
  }
  if (ranges.empty()) {
    // Whole units (channels of the feature map an fc reads flattened),
    // as the cost formulas count them.
    const int64_t units = InputUnits(g_, n);
    const int64_t per = size / units;
    auto counts = SplitCounts(units, gshares);
    if (!counts.ok()) {
      return counts.status().WithContext(
          "layer " + n.name + " (" + SchemeName(s) + "): its " +
          std::to_string(size) + " inputs cannot be split over " +
          std::to_string(G) + " devices");
    }
    int64_t b = 0;
    for (int64_t c : counts.value()) {
      ranges.push_back({b, b + c * per});
      b += c * per;
    }
  }
  // The token slices the partial sums will be reduce-scattered by
  // (ScatterPartials), when the layer computes them in chunks.
  const Shape& y = ShapeOf(n.outputs[0]);
  const WeightLayout layout = WeightLayoutOf(n);
  std::vector<std::pair<int64_t, int64_t>> slices;
  if (req_.overlap_reductions && req_.reduce_on_peers && req_.along_heads &&
      layout.plain() && !layout.feature_map && y.size() == 2 &&
      ShapeOf(in).size() == 2 && G >= 2 &&
      G <= static_cast<int>(kMaxReduceScatterDevices) && y[0] >= G) {
    auto counts = SplitCounts(y[0], gshares);
    int64_t b = 0;
    for (int64_t c : counts.ok() ? counts.value() : std::vector<int64_t>{}) {
      slices.push_back({b, b + c});
      b += c;
    }
    for (const auto& [sb, se] : slices) {
      if (se <= sb) slices.clear();
    }
    if (static_cast<int>(slices.size()) != G) slices.clear();
  }
  Dist out{Dist::kPartials, {}, n.name};
  for (int d = 0; d < G; ++d) {
    ASSIGN_OR_RETURN(LayerPart p, SplitInput(g_, n, ranges[d].first,
                                             ranges[d].second, d == 0));
    // Whole, or in chunks of tokens: the ones after its own slice, the
    // ones before it, its own last (its own need not travel).
    std::vector<std::pair<int64_t, int64_t>> rows;
    if (!slices.empty()) {
      const auto [own_b, own_e] = slices[d];
      if (own_e < y[0]) rows.push_back({own_e, y[0]});
      if (own_b > 0) rows.push_back({0, own_b});
      rows.push_back({own_b, own_e});
    } else {
      rows.push_back({0, -1});
    }
    for (const auto& [r0, r1] : rows) {
      std::string name =
          n.name + "/" + SchemeName(s) + "@" + std::to_string(group[d]);
      Region in_r = p.in_region, out_r = p.out_region;
      if (r1 >= 0) {
        name += " tokens " + std::to_string(r0) + "-" + std::to_string(r1);
        in_r.begin[0] = out_r.begin[0] = r0;
        in_r.end[0] = out_r.end[0] = r1;
      }
      const int t = NewTask(name, {group[d]}, n.name, s);
      RETURN_IF_ERROR(Need(t, in, in_r, n.name));
      RETURN_IF_ERROR(AddWeights(t, p.weights));
      RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(p.node));
      out.holders.push_back(Holder{t, out_r});
    }
  }
  placed_.insert(n.name);
  dist_[n.outputs[0]] = out;
  return Status::Ok();
}

}  // namespace plan_build
}  // namespace shoal
