#include "sim/profile_variants.h"

#include <set>

#include "graph/attrs.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "partition/spatial_split.h"

namespace shoal {

namespace {

constexpr int kSplits[] = {2, 4, 8};
constexpr int kStrips[] = {2, 4};

// A graph holding `n` alone, its tensors given `shapes` (else the model's).
StatusOr<Graph> OneNode(const Graph& g, const Node& n,
                        const std::map<std::string, Shape>& shapes) {
  Graph f;
  f.name = n.name;
  for (const auto& in : n.inputs) {
    if (in.empty() || f.FindTensor(in) != nullptr) continue;
    const TensorInfo* t = g.FindTensor(in);
    if (t == nullptr)
      return Internal("node " + n.name + " reads unknown " + in);
    auto it = shapes.find(in);
    const Shape& s = it != shapes.end() ? it->second : t->shape;
    RETURN_IF_ERROR(t->is_weight() ? f.AddWeight(in, s) : f.AddInput(in, s));
  }
  RETURN_IF_ERROR(f.AddNode(n));
  f.outputs = n.outputs;
  RETURN_IF_ERROR(InferShapes(&f));
  return f;
}

// n with 1/k of its output channels (conv: dense or depthwise; Gemm).
StatusOr<Graph> OutputSplit(const Graph& g, const Node& n, int k) {
  std::map<std::string, Shape> shapes;
  Node m = n;
  const WeightLayout l = WeightLayoutOf(n);
  if (!SplitFactsOf(n.op).by_weight || !l.any()) {
    return Unsupported(n.op + " is not output-split");
  }
  if (l.feature_map) {  // a convolution: W [M, C/group, kernel...]
    const Shape w = g.tensors.at(n.inputs[1]).shape;
    const Shape x = g.tensors.at(n.inputs[0]).shape;
    const int64_t group = l.groups;
    const int64_t channels = w[l.out_axis];
    const int64_t o = channels / k;
    if (o < 1 || channels % k) return Unsupported("too few channels");
    Shape ws = w;
    ws[l.out_axis] = o;
    if (group > 1) {
      if (group != channels || group != x[1]) {
        return Unsupported("grouped conv");
      }
      Shape xs = x;
      xs[1] = o;
      shapes[n.inputs[0]] = xs;
      m.attrs.Set("group", o);
    }
    shapes[n.inputs[1]] = ws;
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) shapes[n.inputs[2]] = {o};
    return OneNode(g, m, shapes);
  }
  // Rows times a weight (a Gemm).
  Shape w = g.tensors.at(n.inputs[1]).shape;
  int64_t& out = w[l.out_axis];
  if (out / k < 1 || out % k) return Unsupported("too few features");
  out /= k;
  shapes[n.inputs[1]] = w;
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    Shape b = g.tensors.at(n.inputs[2]).shape;
    if (!b.empty() && b.back() > 1) b.back() /= k;
    shapes[n.inputs[2]] = b;
  }
  return OneNode(g, m, shapes);
}

// n on one strip of 1/k of the output rows, with its halo (the middle
// strip: no image edge, so no padding).
StatusOr<Graph> RowStrip(const Graph& g, const Node& n, int k) {
  RETURN_IF_ERROR(CheckTileable(g, n));
  ASSIGN_OR_RETURN(auto tiles,
                   TileChain(g, {&n}, std::vector<double>(k, 1.0 / k)));
  const Tile& t = tiles[k / 2];
  std::map<std::string, Shape> shapes;
  shapes[n.inputs[0]] = t.in_region.extent();
  return OneNode(g, t.nodes.at(0), shapes);
}

std::string Signature(const Graph& f) {
  const Node& n = f.nodes.at(0);
  std::string s = n.op;
  for (const auto& in : n.inputs) {
    if (!in.empty()) s += "|" + ShapeToString(f.tensors.at(in).shape);
  }
  for (const auto& [k, v] : n.attrs.map()) s += "|" + k + "=" + AttrToString(v);
  return s;
}

}  // namespace

StatusOr<std::vector<LayerVariant>> ProfileVariants(const Graph& g) {
  std::vector<LayerVariant> out;
  std::set<std::string> seen;
  auto add = [&](const Node& n, const std::string& variant,
                 StatusOr<Graph> f) -> Status {
    if (!f.ok()) {
      // A split that does not apply to this layer is simply not measured;
      // the whole layer must be.
      if (variant == "whole") return f.status().WithContext("layer " + n.name);
      return Status::Ok();
    }
    if (!seen.insert(Signature(*f)).second) return Status::Ok();
    LayerVariant v;
    v.layer = n.name;
    v.variant = variant;
    v.fragment = std::move(f).value();
    ASSIGN_OR_RETURN(v.cost, ComputeNodeCost(v.fragment, v.fragment.nodes[0]));
    out.push_back(std::move(v));
    return Status::Ok();
  };
  for (const auto& n : g.nodes) {
    RETURN_IF_ERROR(add(n, "whole", OneNode(g, n, {})));
    if (SplitFactsOf(n.op).by_weight) {
      for (int k : kSplits) {
        RETURN_IF_ERROR(
            add(n, "lop 1/" + std::to_string(k), OutputSplit(g, n, k)));
      }
    }
    if (WeightLayoutOf(n).feature_map) {
      for (int k : kStrips) {
        RETURN_IF_ERROR(
            add(n, "rows 1/" + std::to_string(k), RowStrip(g, n, k)));
      }
    }
  }
  return out;
}

}  // namespace shoal
