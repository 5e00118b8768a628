// spatial: chains of conv and pooling layers run on strips of rows (one per
// device, sized by share), or on 2-D tiles (plan --tiles 2d), extended while
// the halos stay cheap; between two chains each tile takes from its neighbours
// only the rows and columns its halo needs. fc layers are split by output
// (lop) or by input (lip), each device holding its part of the weights.
// Elementwise ops (residual adds) run on the strips where they live
// (plan_builder.cc); the rest (concats, global pooling) runs whole on the
// input device.
#include <algorithm>
#include <cstdio>
#include <numeric>
#include <set>

#include "graph/cost.h"
#include "graph/op_registry.h"
#include "partition/fused_segments.h"
#include "partition/layer_split.h"
#include "partition/plan_builder.h"
#include "partition/spatial_split.h"
#include "partition/split_counts.h"
#include "partition/strategy.h"
#include "plan/plan_cost.h"

namespace shoal {

namespace {

// The devices a chain of strips from `n` runs on, top to bottom: the
// spatial devices (PlanOptions::spatial_devices, else every device), or,
// when n's output has fewer rows than there are of them (ResNet's last
// stage: 7), the fastest ones, one row each. Empty: every device.
std::vector<int> ChainGroup(const Graph& g, const Node& n,
                            const PlanOptions& opts) {
  const Shape& s = g.tensors.at(n.outputs[0]).shape;
  std::vector<int> order = opts.spatial_devices;
  if (order.empty()) {
    order.resize(opts.devices.size());
    std::iota(order.begin(), order.end(), 0);
  }
  const int N = static_cast<int>(order.size());
  if (s.size() != 4 || s[2] >= N || s[2] < 2) return opts.spatial_devices;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return opts.devices[a].share > opts.devices[b].share;
  });
  order.resize(s[2]);
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<double> GroupShares(const std::vector<int>& group,
                                const std::vector<PlanDevice>& devices) {
  if (group.empty()) return NormalizedShares(devices);
  std::vector<PlanDevice> sub;
  for (int d : group) sub.push_back(devices[d]);
  return NormalizedShares(sub);
}

// The chain of conv and pooling layers from `n`, run on strips of rows or
// on 2-D tiles (opts.tiles); an error when `n` alone cannot be split.
StatusOr<SpatialChain> ChainFrom(const Graph& g, const Node& n,
                                 const PlanOptions& opts) {
  std::vector<const Node*> chain = {&n};
  std::vector<int> group = opts.spatial_devices;
  std::vector<double> shares = GroupShares(group, opts.devices);
  int per_band = ChooseTilesPerBand(g, chain, shares, opts.tiles);
  if (per_band == 0 && opts.tiles == TileShape::kStrips) {
    group = ChainGroup(g, n, opts);
    shares = GroupShares(group, opts.devices);
    per_band = 1;
  }
  if (per_band == 0) {
    const Shape& s = g.tensors.at(n.outputs[0]).shape;
    return Unsupported("layer " + n.name + "'s output (" + ShapeToString(s) +
                       ") cannot be cut into 2-D tiles over " +
                       std::to_string(shares.size()) + " devices");
  }
  auto f = ChainReadFactor(g, chain, shares, per_band);
  if (!f.ok()) return f.status();
  const double max_factor =
      n.inputs[0] == g.inputs[0] && opts.input_read_factor >= 0
          ? opts.input_read_factor
          : opts.max_read_factor;
  // Extend while the next op reads only this chain's output and the tiles
  // together still read few enough input elements.
  while (true) {
    const auto cons = g.ConsumerIndices(chain.back()->outputs[0]);
    if (cons.size() != 1 || chain.back()->outputs[0] == g.outputs[0]) break;
    const Node& c = g.nodes[cons[0]];
    if (!CheckTileable(g, c).ok()) break;
    chain.push_back(&c);
    auto fx = ChainReadFactor(g, chain, shares, per_band);
    // An op that reads no more than the chain already does (an activation,
    // a pool on aligned strips) always joins it.
    if (!fx.ok() ||
        (fx.value() > max_factor && fx.value() > f.value() + 1e-9)) {
      chain.pop_back();
      break;
    }
    f = fx;
  }
  SpatialChain sc;
  sc.devices = group;
  sc.tiles_per_band = per_band;
  char buf[64];
  snprintf(buf, sizeof(buf), "%.2f", f.value());
  const std::string layout = per_band == 1
                                 ? "strips of rows"
                                 : "2-D tiles (" + std::to_string(per_band) +
                                       " side by side in each band of rows)";
  sc.reason =
      layout + " through " + std::to_string(chain.size()) + " layers from " +
      chain.front()->name +
      (per_band == 1 ? " (strips read " + std::string(buf) + "x the input rows)"
                     : " (tiles read " + std::string(buf) + "x the input)") +
      (group == opts.spatial_devices
           ? (group.empty()
                  ? std::string()
                  : ", on " + std::to_string(group.size()) + " of the devices")
           : ", on the " + std::to_string(group.size()) +
                 " fastest devices, one row each");
  for (const Node* c : chain) sc.nodes.push_back(c->name);
  return sc;
}

// The strips of one fused segment (nodes [s, p] of g.nodes, handing on
// the tensor `out`) as spatial chains: each chain of window layers
// computes, on each device, the rows SegmentRows says; the elementwise
// ops between them (sums, activations) run on those strips where they are
// (plan_builder.cc's PlaceAlongParts). Fails when a strip would compute
// nothing; `factor` gets the strips' work over the segment's.
StatusOr<std::vector<SpatialChain>> SegmentChains(const Graph& g, int s, int p,
                                                  const std::string& out,
                                                  const PlanOptions& opts,
                                                  double* factor) {
  std::vector<const Node*> nodes;
  std::set<std::string> inside;
  for (int i = s; i <= p; ++i) {
    nodes.push_back(&g.nodes[i]);
    inside.insert(g.nodes[i].name);
  }
  const std::vector<int> group =
      ChainGroup(g, g.nodes[g.ProducerIndex(out)], opts);
  const std::vector<double> shares = GroupShares(group, opts.devices);
  ASSIGN_OR_RETURN(auto counts,
                   SplitCounts(g.tensors.at(out).shape[2], shares));
  std::vector<Rows> own;
  int64_t row = 0;
  for (int64_t c : counts) {
    own.push_back({row, row + c});
    row += c;
  }
  ASSIGN_OR_RETURN(auto rows, SegmentRows(g, nodes, out, own));
  ASSIGN_OR_RETURN(*factor, SegmentWorkFactor(g, nodes, rows));
  char buf[160];
  snprintf(buf, sizeof(buf),
           "a fused segment of %d layers from %s to %s: each strip also "
           "computes the rows its later layers read (%.2fx the work), so "
           "only the segment's input travels",
           p - s + 1, g.nodes[s].name.c_str(),
           g.nodes[g.ProducerIndex(out)].name.c_str(), *factor);
  std::vector<SpatialChain> chains;
  std::set<std::string> chained;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (chained.count(n->name) || !SplitFactsOf(n->op).spatial_halo) continue;
    SpatialChain sc;
    sc.devices = group;
    sc.reason = buf;
    size_t last = i;
    sc.nodes.push_back(n->name);
    while (nodes[last]->outputs[0] != out) {
      const auto cons = g.ConsumerIndices(nodes[last]->outputs[0]);
      if (cons.size() != 1) break;
      const Node& c = g.nodes[cons[0]];
      if (!inside.count(c.name) || !CheckTileable(g, c).ok()) break;
      last = cons[0] - s;
      sc.nodes.push_back(c.name);
    }
    for (const auto& name : sc.nodes) chained.insert(name);
    sc.rows = rows[last];
    sc.owned = nodes[last]->outputs[0] == out ? own : DisjointRows(rows[last]);
    chains.push_back(std::move(sc));
  }
  return chains;
}

// Fused segments (PlanOptions::segment_work_factor) over every run of
// layers that strips can compute: each segment runs from one tensor that
// alone crosses between the layers before and after (a residual block's
// output) to a later such tensor, as far as its strips' work stays within
// the factor (at least to the next such tensor). The layers of a run that
// does not begin at such a tensor are left to plain chains.
Status AddFusedSegments(const Graph& g, const PlanOptions& opts,
                        std::set<std::string>* used, BuildRequest* r) {
  const int n = static_cast<int>(g.nodes.size());
  for (int i = 0; i < n;) {
    if (!SegmentTileable(g, g.nodes[i])) {
      ++i;
      continue;
    }
    int j = i;
    while (j < n && SegmentTileable(g, g.nodes[j])) ++j;
    int s = i;
    while (s < j && !CutTensor(g, s - 1).empty()) {
      const double limit = s == 0 && opts.input_read_factor >= 1
                               ? opts.input_read_factor
                               : opts.segment_work_factor;
      std::vector<SpatialChain> best;
      int best_end = -1;
      for (int p = s; p < j; ++p) {
        const std::string out = CutTensor(g, p);
        if (out.empty() || g.ProducerIndex(out) < s) continue;
        double factor = 0;
        auto chains = SegmentChains(g, s, p, out, opts, &factor);
        if (!chains.ok()) break;
        if (best_end >= 0 && factor > limit) break;
        best = std::move(chains).value();
        best_end = p;
      }
      if (best_end < 0) break;
      for (int k = s; k <= best_end; ++k) used->insert(g.nodes[k].name);
      for (auto& c : best) r->spatial.push_back(std::move(c));
      s = best_end + 1;
    }
    i = j;
  }
  return Status::Ok();
}

// fc layers: whole on the input device, as the collaborative-execution
// paper runs them, unless asked to split them (by outputs or by inputs) or
// unless the input device cannot hold them whole beside its strips'
// weights.
bool SplitFc(const Graph& g, const PlanOptions& opts) {
  if (opts.spatial_fc != SpatialFc::kWhereNeeded) {
    return opts.spatial_fc == SpatialFc::kLop ||
           opts.spatial_fc == SpatialFc::kLip ||
           opts.spatial_fc == SpatialFc::kLipLastWhole;
  }
  const int64_t mem = opts.devices[opts.hub].memory_bytes;
  int64_t weights = 0, largest = 0;
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) {
      const TensorInfo* t = g.FindTensor(in);
      if (t == nullptr || !t->is_weight()) continue;
      const int64_t b = NumElements(t->shape) * kBytesPerElement;
      weights += b;
      largest = std::max(largest, b);
    }
  }
  return mem > 0 && DeviceWeightMemory(weights, largest) > mem;
}

// The fc layers no chain took: split by outputs (lop) or by inputs (lip),
// the last perhaps whole on the input device (SpatialFc::kLipLastWhole).
void SplitFcLayers(const Graph& g, const PlanOptions& opts,
                   const std::set<std::string>& used, BuildRequest* r) {
  std::string last;
  if (opts.spatial_fc == SpatialFc::kLipLastWhole) {
    int fcs = 0;
    for (const auto& n : g.nodes) {
      if (used.count(n.name) || !IsFcLayer(g, n)) continue;
      last = n.name;
      ++fcs;
    }
    if (fcs < 2) last.clear();  // a lone fc layer stays split
  }
  for (const auto& n : g.nodes) {
    if (used.count(n.name) || !IsFcLayer(g, n)) {
      continue;
    }
    LayerChoice lc;
    lc.devices = opts.spatial_devices;
    if (n.name == last) {
      // Whole on the input device, and so are the elementwise ops and
      // reshapes between it and the split layer before it, so that its
      // partial sums are added there (not reduce-scattered among the
      // devices, to be gathered again).
      for (int p = g.ProducerIndex(n.inputs[0]); p >= 0;) {
        const Node& e = g.nodes[p];
        const OpSchema* sc = OpRegistry::Global().Find(e.op);
        if (e.inputs.size() != 1 || sc == nullptr ||
            !(sc->elementwise() || SplitFactsOf(e.op).relayout))
          break;
        r->placement[e.name] = {opts.hub};
        p = g.ProducerIndex(e.inputs[0]);
      }
      continue;
    }
    if (opts.spatial_fc == SpatialFc::kLip ||
        opts.spatial_fc == SpatialFc::kLipLastWhole) {
      lc.scheme = Scheme::kLip;
      lc.reason =
          "input splitting: strips of rows cannot split an fc layer, so each "
          "device multiplies its slice of the inputs by its share of the "
          "weights, and the partial sums are added up on the devices";
      r->layers[n.name] = lc;
      continue;
    }
    lc.scheme = Scheme::kLop;
    lc.reason =
        "output splitting: strips of rows cannot split an fc layer, so each "
        "device computes its share of the outputs with its share of the "
        "weights" +
        std::string(opts.spatial_fc == SpatialFc::kLop
                        ? ""
                        : " (the input device cannot hold the model's "
                          "weights whole)");
    r->layers[n.name] = lc;
  }
}

// A pool that starts no chain when fc layers are split by inputs: one
// that reads a chain's strips, whose output alone a flatten reads, and (past
// elementwise ops) an fc layer. The fc's devices each gather the pool's input
// on the channels their slice reads and pool it themselves (PlanBuilder::
// PlaceRelayoutForInputSplit), where strips of the pool would first
// exchange halos: a message fewer on the way to the fc layer (AlexNet's
// last pool on eight Pi 3B+ over Wi-Fi: about 9 ms).
bool PoolsForInputSplitFc(const Graph& g, const Node& n,
                          const PlanOptions& opts,
                          const std::set<std::string>& chained) {
  if ((opts.spatial_fc != SpatialFc::kLip &&
       opts.spatial_fc != SpatialFc::kLipLastWhole) ||
      !SplitFactsOf(n.op).per_channel || n.outputs.size() != 1 ||
      n.inputs.empty()) {
    return false;
  }
  // Its input on strips: made by a chain (an LRN before it runs whole).
  const int producer = g.ProducerIndex(n.inputs[0]);
  if (producer < 0 || !chained.count(g.nodes[producer].name)) return false;
  std::string cur = n.outputs[0];
  bool flattened = false;
  while (cur != g.outputs[0]) {
    const auto cons = g.ConsumerIndices(cur);
    if (cons.size() != 1) return false;
    const Node& c = g.nodes[cons[0]];
    if (c.outputs.size() != 1 || c.inputs.empty() || c.inputs[0] != cur)
      return false;
    if (flattened && IsFcLayer(g, c)) return true;
    const OpSchema* sc = OpRegistry::Global().Find(c.op);
    if (!flattened && SplitFactsOf(c.op).relayout) {
      flattened = true;
    } else if (!flattened || sc == nullptr || !sc->elementwise() ||
               c.inputs.size() != 1) {
      return false;
    }
    cur = c.outputs[0];
  }
  return false;
}

}  // namespace

// The plan builder's request for the spatial strategy's plan.
static StatusOr<BuildRequest> SpatialRequest(const Graph& g,
                                             const PlanOptions& opts) {
  const int n_devices = static_cast<int>(opts.devices.size());
  for (size_t i = 0; i < opts.spatial_devices.size(); ++i) {
    const int d = opts.spatial_devices[i];
    if (d < 0 || d >= n_devices ||
        (i > 0 && d <= opts.spatial_devices[i - 1])) {
      return InvalidArgument(
          "spatial devices must be ascending indices below " +
          std::to_string(n_devices) + "; got " + std::to_string(d) +
          " at position " + std::to_string(i));
    }
  }
  BuildRequest r = BaseRequest(g, opts);
  std::set<std::string> used;
  if (opts.segment_work_factor > 0 && opts.tiles == TileShape::kStrips)
    RETURN_IF_ERROR(AddFusedSegments(g, opts, &used, &r));
  Status last_why = Status::Ok();
  for (const auto& n : g.nodes) {
    if (used.count(n.name)) continue;
    if (!SplitFactsOf(n.op).spatial_halo) continue;
    if (PoolsForInputSplitFc(g, n, opts, used)) continue;
    auto sc = ChainFrom(g, n, opts);
    if (!sc.ok()) {
      last_why = sc.status();
      continue;
    }
    used.insert(sc->nodes.begin(), sc->nodes.end());
    r.spatial.push_back(*sc);
  }
  if (SplitFc(g, opts)) SplitFcLayers(g, opts, used, &r);
  for (SpatialChain& c : r.spatial) {
    auto ts = opts.spatial_shares.find(c.nodes.front());
    if (ts != opts.spatial_shares.end() && c.rows.empty() &&
        c.tiles_per_band > 1) {
      RETURN_IF_ERROR(ValidateShares(ts->second)
                          .WithContext("spatial chain from " + c.nodes.front() +
                                       "'s tiles"));
      double sum = 0;
      for (double x : ts->second) sum += x;
      c.shares.clear();
      for (double x : ts->second) c.shares.push_back(x / sum);
      continue;
    }
    auto it = opts.spatial_rows.find(c.nodes.front());
    if (it == opts.spatial_rows.end() || !c.rows.empty() ||
        c.tiles_per_band != 1)
      continue;
    int64_t total = 0;
    for (int64_t k : it->second) {
      if (k < 1)
        return InvalidArgument("spatial chain from " + c.nodes.front() +
                               ": a strip of " + std::to_string(k) + " rows");
      total += k;
    }
    c.shares.clear();
    for (int64_t k : it->second) c.shares.push_back(double(k) / double(total));
  }
  if (r.spatial.empty()) {
    return InvalidArgument(
        "strategy spatial does not apply to model " + g.name +
        ": no conv or pooling layer can be split "
        "into rows" +
        (last_why.ok() ? "" : " (" + last_why.message() + ")"));
  }
  return r;
}

static StatusOr<Plan> PlanSpatial(const Graph& g, const PlanOptions& opts) {
  ASSIGN_OR_RETURN(BuildRequest r, SpatialRequest(g, opts));
  return BuildPlan(r);
}

StatusOr<std::vector<StripRows>> SpatialStripRows(const Graph& g,
                                                  const PlanOptions& opts) {
  ASSIGN_OR_RETURN(BuildRequest r, SpatialRequest(g, opts));
  const std::vector<double> all = NormalizedShares(opts.devices);
  std::vector<StripRows> out;
  for (const SpatialChain& c : r.spatial) {
    if (!c.rows.empty() || c.tiles_per_band != 1) continue;
    // As PlanBuilder::Group shares the chain's devices (none named: all).
    std::vector<double> shares = c.shares;
    if (shares.empty() && c.devices.empty()) shares = all;
    if (shares.empty()) {
      double sum = 0;
      for (int d : c.devices) sum += all[d];
      for (int d : c.devices) shares.push_back(all[d] / sum);
    }
    const Node* last = g.FindNode(c.nodes.back());
    if (last == nullptr) continue;
    const Shape& o = g.tensors.at(last->outputs[0]).shape;
    if (o.size() != 4) continue;
    ASSIGN_OR_RETURN(std::vector<int64_t> rows, SplitCounts(o[2], shares));
    std::vector<int> devices = c.devices;
    if (devices.empty())
      for (int d = 0; d < static_cast<int>(all.size()); ++d)
        devices.push_back(d);
    out.push_back(
        StripRows{c.nodes.front(), std::move(devices), std::move(rows)});
  }
  return out;
}

StatusOr<std::vector<TileCut>> SpatialTileCuts(const Graph& g,
                                               const PlanOptions& opts) {
  ASSIGN_OR_RETURN(BuildRequest r, SpatialRequest(g, opts));
  const std::vector<double> all = NormalizedShares(opts.devices);
  std::vector<TileCut> out;
  for (const SpatialChain& c : r.spatial) {
    if (!c.rows.empty() || c.tiles_per_band < 2) continue;
    TileCut t;
    t.chain = c.nodes.front();
    t.devices = c.devices;
    if (t.devices.empty()) {
      for (int d = 0; d < static_cast<int>(all.size()); ++d)
        t.devices.push_back(d);
    }
    t.shares = c.shares;
    if (t.shares.empty()) {
      double sum = 0;
      for (int d : t.devices) sum += all[d];
      for (int d : t.devices) t.shares.push_back(all[d] / sum);
    }
    const Node* last = g.FindNode(c.nodes.back());
    if (last == nullptr) continue;
    const Shape& o = g.tensors.at(last->outputs[0]).shape;
    if (o.size() != 4) continue;
    t.rows = o[2];
    t.cols = o[3];
    t.tiles_per_band = c.tiles_per_band;
    out.push_back(std::move(t));
  }
  return out;
}

SHOAL_REGISTER_STRATEGY("spatial", 8, PlanSpatial);

}  // namespace shoal
