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
#include "partition/layer_split.h"
#include "partition/plan_builder.h"
#include "partition/spatial_split.h"
#include "partition/strategy.h"
#include "plan/plan_cost.h"

namespace shoal {

namespace {

// The devices a chain of strips from `n` runs on, top to bottom: every
// device, or, when n's output has fewer rows than there are devices
// (ResNet's last stage: 7), the fastest ones, one row each. Empty: every
// device.
std::vector<int> ChainGroup(const Graph& g, const Node& n,
                            const std::vector<PlanDevice>& devices) {
  const Shape& s = g.tensors.at(n.outputs[0]).shape;
  const int N = static_cast<int>(devices.size());
  if (s.size() != 4 || s[2] >= N || s[2] < 2) return {};
  std::vector<int> order(N);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return devices[a].share > devices[b].share;
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
  std::vector<int> group;
  std::vector<double> shares = NormalizedShares(opts.devices);
  int per_band = ChooseTilesPerBand(g, chain, shares, opts.tiles);
  if (per_band == 0 && opts.tiles == TileShape::kStrips) {
    group = ChainGroup(g, n, opts.devices);
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
      (group.empty() ? std::string()
                     : ", on the " + std::to_string(group.size()) +
                           " fastest devices, one row each");
  for (const Node* c : chain) sc.nodes.push_back(c->name);
  return sc;
}

// fc layers: whole on the input device, as the collaborative-execution
// paper runs them, unless asked to split them (by outputs or by inputs) or
// unless the input device cannot hold them whole beside its strips'
// weights.
bool SplitFc(const Graph& g, const PlanOptions& opts) {
  if (opts.spatial_fc != SpatialFc::kWhereNeeded) {
    return opts.spatial_fc == SpatialFc::kLop ||
           opts.spatial_fc == SpatialFc::kLip;
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

// Output splitting (lop) for the fc layers no chain took.
void SplitFcLayers(const Graph& g, const PlanOptions& opts,
                   const std::set<std::string>& used, BuildRequest* r) {
  for (const auto& n : g.nodes) {
    if (used.count(n.name) || !IsFcLayer(g, n)) {
      continue;
    }
    LayerChoice lc;
    if (opts.spatial_fc == SpatialFc::kLip) {
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

}  // namespace

static StatusOr<Plan> PlanSpatial(const Graph& g, const PlanOptions& opts) {
  BuildRequest r = BaseRequest(g, opts);
  std::set<std::string> used;
  Status last_why = Status::Ok();
  for (const auto& n : g.nodes) {
    if (used.count(n.name)) continue;
    if (!SplitFactsOf(n.op).spatial_halo) continue;
    auto sc = ChainFrom(g, n, opts);
    if (!sc.ok()) {
      last_why = sc.status();
      continue;
    }
    used.insert(sc->nodes.begin(), sc->nodes.end());
    r.spatial.push_back(*sc);
  }
  if (SplitFc(g, opts)) SplitFcLayers(g, opts, used, &r);
  if (r.spatial.empty()) {
    return InvalidArgument(
        "strategy spatial does not apply to model " + g.name +
        ": no conv or pooling layer can be split "
        "into rows" +
        (last_why.ok() ? "" : " (" + last_why.message() + ")"));
  }
  return BuildPlan(r);
}

SHOAL_REGISTER_STRATEGY("spatial", 8, PlanSpatial);

}  // namespace shoal
