#include "lcp/prune_channels.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace shoal {

namespace {

// Units kept along one axis of a weight: unit u is the `block` indices
// from u * block (a channel a Gemm reads flattened is H x W features).
struct Selection {
  int axis = 0;
  std::vector<int64_t> keep;
  int64_t block = 1;
};

// What lies between a layer and the next one that reads its channels.
struct Chain {
  std::vector<int> nodes;  // per-channel ops and at most one Flatten
  int consumer = -1;
  int64_t block = 1;  // features per channel after a Flatten
};

// A layer split by its weight's channels (graph/op_registry.h), of one
// group and not transposed: a convolution over a map, or a fully
// connected layer over rows.
bool IsPlainLayer(const Node& n) {
  return SplitFactsOf(n.op).by_weight && WeightLayoutOf(n).plain();
}
bool IsPlainConv(const Node& n) {
  return IsPlainLayer(n) && WeightLayoutOf(n).feature_map;
}
bool IsPlainGemm(const Node& n) {
  return IsPlainLayer(n) && !WeightLayoutOf(n).feature_map;
}

// The weight axis of a layer's outputs, and of a consumer's inputs.
int OutputAxis(const Node& n) { return WeightLayoutOf(n).out_axis; }
int InputAxis(const Node& n) { return WeightLayoutOf(n).in_axis; }

// A relayout of a map [N, C, ...] into rows [N, C * ...] (Flatten at axis
// 1): channel c becomes a block of features.
bool FlattensChannels(const Graph& g, const Node& n, const Shape& in) {
  if (!SplitFactsOf(n.op).relayout || n.outputs.size() != 1 || in.size() < 2)
    return false;
  const TensorInfo* out = g.FindTensor(n.outputs[0]);
  return out != nullptr && out->shape.size() == 2 && out->shape[0] == in[0] &&
         out->shape[1] == NumElements(in) / in[0];
}

bool ReadOnlyBy(const Graph& g, const std::string& tensor) {
  return g.ConsumerIndices(tensor).size() == 1;
}

bool IsOutput(const Graph& g, const std::string& t) {
  return std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
}

// Follows layer p's output to the one Conv or Gemm that reads its
// channels; nothing when the path branches, merges or mixes channels.
std::optional<Chain> FollowChain(const Graph& g, int p) {
  Chain c;
  std::string t = g.nodes[p].outputs[0];
  const Shape& s = g.FindTensor(t)->shape;
  if (s.size() < 2) return std::nullopt;
  const int64_t channels = s[1];
  bool flattened = false;
  while (true) {
    if (IsOutput(g, t)) return std::nullopt;
    const std::vector<int> readers = g.ConsumerIndices(t);
    if (readers.size() != 1) return std::nullopt;
    const int r = readers[0];
    const Node& n = g.nodes[r];
    if (n.inputs.empty() || n.inputs[0] != t) return std::nullopt;
    const size_t rank = g.FindTensor(t)->shape.size();
    if ((IsPlainConv(n) && !flattened && rank == 4) ||
        (IsPlainGemm(n) && rank == 2)) {
      if (n.inputs.size() < 2 || !ReadOnlyBy(g, n.inputs[1])) {
        return std::nullopt;
      }
      c.consumer = r;
      return c;
    }
    if (n.outputs.size() != 1) return std::nullopt;
    if (!flattened && FlattensChannels(g, n, g.FindTensor(t)->shape)) {
      const Shape& in = g.FindTensor(t)->shape;
      c.block = NumElements(in) / (in[0] * in[1]);
      flattened = true;
    } else if (!flattened &&
               (ActsPerChannel(n) || ActsPerChannelWithWeights(n))) {
      // Every other input a weight of one value per channel (BatchNorm's
      // four) or one value for all.
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        if (n.inputs[i].empty()) continue;
        const TensorInfo* w = g.FindTensor(n.inputs[i]);
        if (w == nullptr || !w->is_weight()) return std::nullopt;
        if (NumElements(w->shape) == 1) continue;
        if (w->shape.size() != 1 || w->shape[0] != channels ||
            !ReadOnlyBy(g, n.inputs[i])) {
          return std::nullopt;
        }
      }
    } else {
      return std::nullopt;
    }
    c.nodes.push_back(r);
    t = n.outputs[0];
  }
}

// The L1 norm of each output channel's weights.
std::vector<double> Importance(const Tensor& w, int axis) {
  const int64_t units = w.shape[axis];
  int64_t inner = 1;
  for (size_t a = axis + 1; a < w.shape.size(); ++a) inner *= w.shape[a];
  std::vector<double> l1(units, 0.0);
  for (int64_t i = 0; i < w.size(); ++i) {
    l1[(i / inner) % units] += std::fabs(w.data[i]);
  }
  return l1;
}

// The `k` most important channels, in their order.
std::vector<int64_t> Keep(const std::vector<double>& importance, int64_t k) {
  std::vector<int64_t> idx(importance.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
    return importance[a] > importance[b];
  });
  idx.resize(k);
  std::sort(idx.begin(), idx.end());
  return idx;
}

Tensor Select(const Tensor& t, const Selection& s) {
  int64_t outer = 1, inner = 1;
  for (int a = 0; a < s.axis; ++a) outer *= t.shape[a];
  for (size_t a = s.axis + 1; a < t.shape.size(); ++a) inner *= t.shape[a];
  const int64_t along = t.shape[s.axis];
  Shape shape = t.shape;
  shape[s.axis] = static_cast<int64_t>(s.keep.size()) * s.block;
  Tensor out(shape);
  float* dst = out.data.data();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t u : s.keep) {
      for (int64_t b = 0; b < s.block; ++b) {
        const float* src =
            t.data.data() + (o * along + u * s.block + b) * inner;
        dst = std::copy(src, src + inner, dst);
      }
    }
  }
  return out;
}

// The bias of layer n, as a selection of its outputs; false when it has a
// shape pruning cannot follow.
bool SelectBias(const Graph& g, const Node& n, const std::vector<int64_t>& keep,
                int64_t channels,
                std::map<std::string, std::vector<Selection>>* sel) {
  if (n.inputs.size() < 3 || n.inputs[2].empty()) return true;
  const TensorInfo* b = g.FindTensor(n.inputs[2]);
  if (b == nullptr || !b->is_weight() || !ReadOnlyBy(g, n.inputs[2])) {
    return false;
  }
  if (NumElements(b->shape) == 1) return true;  // one value for all
  if (NumElements(b->shape) != channels || b->shape.back() != channels) {
    return false;
  }
  (*sel)[n.inputs[2]].push_back(
      {static_cast<int>(b->shape.size()) - 1, keep, 1});
  return true;
}

}  // namespace

StatusOr<PrunedModel> PruneChannels(const Model& m, const PruneOptions& o) {
  if (!(o.ratio >= 0 && o.ratio < 1)) {
    return InvalidArgument("the pruning ratio must be in [0, 1), not " +
                           std::to_string(o.ratio));
  }
  if (!m.has_weights()) {
    return InvalidArgument("pruning by weight magnitude needs the weights of " +
                           m.graph.name);
  }
  RETURN_IF_ERROR(CheckWeights(m.graph, m.weights));
  const Graph& g = m.graph;
  PrunedModel out;
  std::map<std::string, std::vector<Selection>> sel;
  for (size_t p = 0; p < g.nodes.size(); ++p) {
    const Node& n = g.nodes[p];
    if (!(IsPlainConv(n) || IsPlainGemm(n)) || n.inputs.size() < 2 ||
        n.outputs.size() != 1 || !ReadOnlyBy(g, n.inputs[1])) {
      continue;
    }
    const auto chain = FollowChain(g, static_cast<int>(p));
    if (!chain) continue;
    const Tensor& w = m.weights.at(n.inputs[1]);
    const int axis = OutputAxis(n);
    const int64_t channels = w.shape[axis];
    const int64_t k = std::max<int64_t>(
        1, channels - static_cast<int64_t>(std::floor(o.ratio * channels)));
    if (k == channels) continue;
    const std::vector<int64_t> keep = Keep(Importance(w, axis), k);
    std::map<std::string, std::vector<Selection>> mine;
    if (!SelectBias(g, n, keep, channels, &mine)) continue;
    mine[n.inputs[1]].push_back({axis, keep, 1});
    for (int c : chain->nodes) {
      const Node& between = g.nodes[c];
      for (size_t i = 1; i < between.inputs.size(); ++i) {
        const std::string& wi = between.inputs[i];
        if (wi.empty() || NumElements(g.FindTensor(wi)->shape) == 1) continue;
        mine[wi].push_back({0, keep, 1});
      }
    }
    const Node& consumer = g.nodes[chain->consumer];
    mine[consumer.inputs[1]].push_back(
        {InputAxis(consumer), keep, chain->block});
    for (auto& [name, s] : mine) {
      sel[name].insert(sel[name].end(), s.begin(), s.end());
    }
    out.layers.push_back({n.name, consumer.name, channels, k});
  }
  out.model.graph = g;
  out.model.weights = m.weights;
  for (const auto& [name, selections] : sel) {
    Tensor t = m.weights.at(name);
    for (const Selection& s : selections) t = Select(t, s);
    out.model.graph.FindTensor(name)->shape = t.shape;
    out.model.weights[name] = std::move(t);
  }
  RETURN_IF_ERROR(
      InferShapes(&out.model.graph).WithContext("pruned " + g.name));
  RETURN_IF_ERROR(CheckWeights(out.model.graph, out.model.weights));
  return out;
}

}  // namespace shoal
