// Spatial chains and fused segments: each device's tile of rows and
// columns through several layers, cut so that halos arrive while the
// interior computes (PlanBuilder).
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/cost.h"
#include "partition/plan_builder_impl.h"
#include "partition/spatial_split.h"
#include "partition/split_counts.h"

namespace shoal {
namespace plan_build {

StatusOr<std::vector<std::pair<std::string, Tile>>> PlanBuilder::OverlapParts(
    const std::vector<const Node*>& nodes, int device, const Tile& tile) {
  std::vector<std::pair<std::string, Tile>> whole = {{"", tile}};
  if (!req_.overlap_halos) return whole;
  const std::string& in = nodes.front()->inputs[0];
  const std::optional<Region> local = LocalBox(in, device, tile.in_region);
  if (!local || Contains(*local, tile.in_region)) return whole;
  const int64_t lo = local->begin[2], hi = local->end[2];
  const int64_t clo = local->begin[3], chi = local->end[3];
  const bool strip = tile.out_region.end[3] - tile.out_region.begin[3] ==
                     ShapeOf(nodes.back()->outputs[0])[3];
  // A strip's interior reads every column it needs from here or none.
  if (strip && (clo > tile.in_region.begin[3] || chi < tile.in_region.end[3]))
    return whole;
  const int64_t b = tile.out_region.begin[2], e = tile.out_region.end[2];
  const int64_t cb = tile.out_region.begin[3], ce = tile.out_region.end[3];
  auto box = [&](int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    return TileBox(
        g_, nodes,
        strip ? TileBounds{r0, r1, 0, -1} : TileBounds{r0, r1, c0, c1});
  };
  // First and last output rows (then columns) that read only local
  // input; the input one output row reads moves monotonically with it.
  int64_t top = b, bottom = e, left = cb, right = ce;
  while (top < e) {
    ASSIGN_OR_RETURN(Tile one, box(top, top + 1, cb, ce));
    if (one.in_region.begin[2] >= lo) break;
    ++top;
  }
  while (bottom > top) {
    ASSIGN_OR_RETURN(Tile one, box(bottom - 1, bottom, cb, ce));
    if (one.in_region.end[2] <= hi) break;
    --bottom;
  }
  if (top >= bottom) return whole;
  if (!strip) {
    while (left < ce) {
      ASSIGN_OR_RETURN(Tile one, box(top, bottom, left, left + 1));
      if (one.in_region.begin[3] >= clo) break;
      ++left;
    }
    while (right > left) {
      ASSIGN_OR_RETURN(Tile one, box(top, bottom, right - 1, right));
      if (one.in_region.end[3] <= chi) break;
      --right;
    }
    if (left >= right) return whole;
  }
  // Each part recomputes the rows of the chain's inner layers that its
  // neighbour part also needs; past max_overlap_recompute times the
  // work the tile is better off waiting for its halo (a deep chain on a
  // thin strip).
  std::vector<std::pair<std::string, Tile>> parts;
  auto add = [&](const char* suffix, int64_t r0, int64_t r1, int64_t c0,
                 int64_t c1) -> Status {
    if (r0 >= r1 || c0 >= c1) return Status::Ok();  // no such edge
    ASSIGN_OR_RETURN(Tile t, box(r0, r1, c0, c1));
    parts.push_back({suffix, std::move(t)});
    return Status::Ok();
  };
  RETURN_IF_ERROR(add("-top", b, top, cb, ce));
  RETURN_IF_ERROR(add("-bottom", bottom, e, cb, ce));
  RETURN_IF_ERROR(add("-left", top, bottom, cb, left));
  RETURN_IF_ERROR(add("-right", top, bottom, right, ce));
  RETURN_IF_ERROR(add("", top, bottom, left, right));
  double whole_work = 0, split_work = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g_, *nodes[i]));
    const Shape& o = ShapeOf(nodes[i]->outputs[0]);
    const double per_cell = double(c.macs + c.output_elements) /
                            double(std::max<int64_t>(1, o[2] * o[3]));
    whole_work += per_cell * double(tile.rows[i] * tile.cols[i]);
    for (const auto& part : parts)
      split_work +=
          per_cell * double(part.second.rows[i] * part.second.cols[i]);
  }
  if (split_work > req_.max_overlap_recompute * whole_work) return whole;
  return parts;
}

Status PlanBuilder::PlaceSpatial(const SpatialChain& ch) {
  std::vector<const Node*> nodes;
  for (const auto& name : ch.nodes) {
    const Node* n = g_.FindNode(name);
    if (n == nullptr)
      return InvalidArgument("spatial chain names unknown node " + name);
    nodes.push_back(n);
  }
  std::vector<int> group;
  std::vector<double> gshares;
  RETURN_IF_ERROR(Group(ch.devices, "spatial chain from " + ch.nodes.front(),
                        &group, &gshares));
  if (!ch.shares.empty()) {
    if (ch.shares.size() != group.size())
      return InvalidArgument("spatial chain from " + ch.nodes.front() +
                             ": shares for " +
                             std::to_string(ch.shares.size()) + " strips on " +
                             std::to_string(group.size()) + " devices");
    RETURN_IF_ERROR(ValidateShares(ch.shares));
    gshares = ch.shares;
  }
  std::vector<Tile> tiles;
  if (ch.rows.empty()) {
    ASSIGN_OR_RETURN(tiles, TileChain(g_, nodes, gshares, ch.tiles_per_band));
  } else {
    if (ch.rows.size() != group.size() || ch.owned.size() != group.size()) {
      return InvalidArgument("spatial chain from " + ch.nodes.front() +
                             ": rows for " + std::to_string(ch.rows.size()) +
                             " tiles on " + std::to_string(group.size()) +
                             " devices");
    }
    for (const auto& [b, e] : ch.rows) {
      ASSIGN_OR_RETURN(Tile t, TileRows(g_, nodes, b, e));
      tiles.push_back(std::move(t));
    }
  }
  const std::string& in = nodes.front()->inputs[0];
  const std::string& out = nodes.back()->outputs[0];
  RETURN_IF_ERROR(ResolvePartials(in));
  Dist d{Dist::kParts, {}, nodes.front()->name};
  for (size_t dev = 0; dev < group.size(); ++dev) {
    std::vector<std::pair<std::string, Tile>> parts = {{"", tiles[dev]}};
    // A fused segment's strips read their device's own rows inside it.
    if (ch.rows.empty()) {
      ASSIGN_OR_RETURN(parts, OverlapParts(nodes, group[dev], tiles[dev]));
    }
    for (auto& [suffix, tile] : parts) {
      const int t =
          NewTask(nodes.front()->name + "/spatial" + suffix + "@" +
                      std::to_string(group[dev]),
                  {group[dev]}, nodes.front()->name, Scheme::kSpatial);
      RETURN_IF_ERROR(Need(t, in, tile.in_region, nodes.front()->name));
      for (const Node& tn : tile.nodes) {
        RETURN_IF_ERROR(AddWholeWeights(t, tn));
        RETURN_IF_ERROR(plan_.tasks[t].fragment.AddNode(tn));
      }
      d.holders.push_back(Holder{t, tile.out_region});
      if (!ch.owned.empty()) {
        const auto& [ob, oe] = ch.owned[dev];
        d.holders.back().owned = Region::Slice(ShapeOf(out), 2, ob, oe);
      }
    }
  }
  for (const Node* n : nodes) placed_.insert(n->name);
  dist_[out] = d;
  return Status::Ok();
}

}  // namespace plan_build
}  // namespace shoal
