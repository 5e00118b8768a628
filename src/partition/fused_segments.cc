#include "partition/fused_segments.h"

#include <algorithm>
#include <map>

#include "graph/cost.h"
#include "graph/op_registry.h"
#include "partition/spatial_split.h"

namespace shoal {

namespace {

bool IsActivation(const Graph& g, const std::string& t) {
  if (t.empty()) return false;
  const TensorInfo* info = g.FindTensor(t);
  return info != nullptr && !info->is_weight();
}

Rows Hull(const Rows& a, const Rows& b) {
  return {std::min(a.first, b.first), std::max(a.second, b.second)};
}

}  // namespace

bool SegmentTileable(const Graph& g, const Node& n) {
  if (CheckTileable(g, n).ok()) return true;
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  if (s == nullptr || !s->elementwise() || n.outputs.size() != 1) return false;
  const Shape& out = g.tensors.at(n.outputs[0]).shape;
  if (out.size() != 4) return false;
  for (const auto& in : n.inputs) {
    if (!IsActivation(g, in) || g.tensors.at(in).shape != out) return false;
  }
  return true;
}

StatusOr<std::vector<std::vector<Rows>>> SegmentRows(
    const Graph& g, const std::vector<const Node*>& nodes,
    const std::string& output, const std::vector<Rows>& own) {
  std::vector<std::vector<Rows>> rows(nodes.size(),
                                      std::vector<Rows>(own.size()));
  for (size_t d = 0; d < own.size(); ++d) {
    // Walking back from the output: the rows each tensor must have here.
    std::map<std::string, Rows> need = {{output, own[d]}};
    for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
      const Node& n = *nodes[i];
      auto it = need.find(n.outputs[0]);
      if (it == need.end() || it->second.first >= it->second.second) {
        return Unsupported("segment: layer " + n.name +
                           " computes no row on strip " + std::to_string(d));
      }
      const Rows r = it->second;
      rows[i][d] = r;
      Rows in = r;
      if (SplitFactsOf(n.op).spatial_halo) {
        ASSIGN_OR_RETURN(Tile t, TileRows(g, {&n}, r.first, r.second));
        in = {t.in_region.begin[2], t.in_region.end[2]};
      }
      for (const auto& x : n.inputs) {
        if (!IsActivation(g, x)) continue;
        auto [slot, fresh] = need.emplace(x, in);
        if (!fresh) slot->second = Hull(slot->second, in);
      }
    }
  }
  return rows;
}

StatusOr<double> SegmentWorkFactor(const Graph& g,
                                   const std::vector<const Node*>& nodes,
                                   const std::vector<std::vector<Rows>>& rows) {
  double whole = 0, split = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g, *nodes[i]));
    const int64_t h = g.tensors.at(nodes[i]->outputs[0]).shape[2];
    const double per_row =
        double(c.macs + c.output_elements) / double(std::max<int64_t>(1, h));
    whole += per_row * double(h);
    for (const Rows& r : rows[i]) split += per_row * double(r.second - r.first);
  }
  return whole > 0 ? split / whole : 1.0;
}

std::vector<Rows> DisjointRows(const std::vector<Rows>& held) {
  std::vector<Rows> out;
  int64_t below = 0;
  for (const Rows& r : held) {
    const int64_t b = std::max(r.first, below);
    const int64_t e = std::max(r.second, b);
    out.push_back({b, e});
    below = e;
  }
  return out;
}

std::string CutTensor(const Graph& g, int p) {
  std::string cut;
  int crossing = 0;
  auto consider = [&](const std::string& t) {
    if (!IsActivation(g, t)) return;
    bool read_after = t == g.outputs[0];
    for (int c : g.ConsumerIndices(t)) read_after |= c > p;
    if (!read_after) return;
    ++crossing;
    cut = t;
  };
  if (p < 0) {
    for (const auto& in : g.inputs) consider(in);
  } else {
    for (const auto& in : g.inputs) consider(in);
    for (int i = 0; i <= p; ++i) {
      for (const auto& o : g.nodes[i].outputs) consider(o);
    }
  }
  if (crossing != 1 || g.tensors.at(cut).shape.size() != 4) return "";
  return cut;
}

}  // namespace shoal
