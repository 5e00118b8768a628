#include "graph/fuse_batchnorm.h"

#include <algorithm>
#include <cmath>

namespace shoal {
namespace {

std::string FreshTensorName(const Graph& g, const std::string& base) {
  std::string name = base;
  for (int k = 2; g.tensors.count(name); ++k)
    name = base + "_" + std::to_string(k);
  return name;
}

// A weight only node `reader` reads, so it may change in place: `name`
// itself, or a copy under a fresh name when other nodes read it too.
std::string OwnWeight(Model* m, int reader, const std::string& name) {
  Graph& g = m->graph;
  if (g.ConsumerIndices(name).size() <= 1) return name;
  std::string copy = FreshTensorName(g, name + ".fused");
  g.tensors[copy] =
      TensorInfo{copy, g.tensors.at(name).shape, TensorKind::kWeight, true};
  if (m->weights.count(name)) m->weights[copy] = m->weights.at(name);
  for (auto& in : g.nodes[reader].inputs)
    if (in == name) in = copy;
  return copy;
}

bool IsWeight(const Graph& g, const std::string& name) {
  const TensorInfo* t = g.FindTensor(name);
  return t && t->is_weight();
}

// The Conv feeding BN node `bn`, or -1 when the pair cannot be fused.
int FusableConv(const Graph& g, const Node& bn) {
  if (bn.inputs.size() != 5 || bn.outputs.size() != 1) return -1;
  if (bn.attrs.GetInt("training_mode", 0) != 0) return -1;
  for (int i = 1; i < 5; ++i)
    if (!IsWeight(g, bn.inputs[i])) return -1;
  const int conv = g.ProducerIndex(bn.inputs[0]);
  if (conv < 0 || g.nodes[conv].op != "Conv") return -1;
  const Node& c = g.nodes[conv];
  if (!IsWeight(g, c.inputs[1]) ||
      (c.inputs.size() > 2 && !c.inputs[2].empty() &&
       !IsWeight(g, c.inputs[2]))) {
    return -1;
  }
  if (g.ConsumerIndices(bn.inputs[0]).size() != 1) return -1;
  if (std::find(g.outputs.begin(), g.outputs.end(), bn.inputs[0]) !=
      g.outputs.end())
    return -1;
  return conv;
}

Status Recompute(Model* m, const Node& bn, const std::string& w,
                 const std::string& b, bool had_bias) {
  auto get = [m](const std::string& n) -> const Tensor* {
    auto it = m->weights.find(n);
    return it == m->weights.end() ? nullptr : &it->second;
  };
  const Tensor *gamma = get(bn.inputs[1]), *beta = get(bn.inputs[2]),
               *mean = get(bn.inputs[3]), *var = get(bn.inputs[4]);
  Tensor* wt = m->weights.count(w) ? &m->weights.at(w) : nullptr;
  if (!gamma || !beta || !mean || !var || !wt) {
    return FailedPrecondition("fusing BN node '" + bn.name +
                              "' needs the weights of it and its conv");
  }
  const double eps = bn.attrs.GetFloat("epsilon", 1e-5f);
  const int64_t channels = wt->shape[0];
  const int64_t per_channel = wt->size() / channels;
  Tensor bias(Shape{channels});
  if (had_bias) bias = m->weights.at(b);
  for (int64_t c = 0; c < channels; ++c) {
    const double s = gamma->data[c] / std::sqrt(var->data[c] + eps);
    for (int64_t k = 0; k < per_channel; ++k) {
      float& v = wt->data[c * per_channel + k];
      v = static_cast<float>(v * s);
    }
    bias.data[c] =
        static_cast<float>((bias.data[c] - mean->data[c]) * s + beta->data[c]);
  }
  m->weights[b] = std::move(bias);
  return Status::Ok();
}

}  // namespace

bool HasFoldableBatchNorm(const Graph& g) {
  for (const auto& n : g.nodes)
    if (n.op == "BatchNormalization" && FusableConv(g, n) >= 0) return true;
  return false;
}

StatusOr<int> FuseBatchNorm(Model* m) {
  Graph& g = m->graph;
  const bool with_weights = m->has_weights();
  int fused = 0;
  for (size_t i = 0; i < g.nodes.size();) {
    if (g.nodes[i].op != "BatchNormalization") {
      ++i;
      continue;
    }
    const Node bn = g.nodes[i];
    const int conv = FusableConv(g, bn);
    if (conv < 0) {
      ++i;
      continue;
    }
    const int64_t channels = g.tensors.at(g.nodes[conv].inputs[1]).shape[0];
    const std::string w = OwnWeight(m, conv, g.nodes[conv].inputs[1]);
    const bool had_bias =
        g.nodes[conv].inputs.size() > 2 && !g.nodes[conv].inputs[2].empty();
    std::string b;
    if (had_bias) {
      b = OwnWeight(m, conv, g.nodes[conv].inputs[2]);
    } else {
      // torchvision names "conv1.weight"; the new bias is "conv1.bias".
      std::string base = w.size() > 7 && w.substr(w.size() - 7) == ".weight"
                             ? w.substr(0, w.size() - 7) + ".bias"
                             : g.nodes[conv].name + ".bias";
      b = FreshTensorName(g, base);
      RETURN_IF_ERROR(g.AddWeight(b, {channels}));
      g.nodes[conv].inputs.resize(3);
      g.nodes[conv].inputs[2] = b;
    }
    if (with_weights) RETURN_IF_ERROR(Recompute(m, bn, w, b, had_bias));
    // The conv now writes the BN's output; its own output disappears.
    g.tensors.erase(g.nodes[conv].outputs[0]);
    g.nodes[conv].outputs[0] = bn.outputs[0];
    g.nodes.erase(g.nodes.begin() + static_cast<long>(i));
    ++fused;
  }
  g.DropUnusedWeights();
  for (auto it = m->weights.begin(); it != m->weights.end();) {
    if (!g.tensors.count(it->first))
      it = m->weights.erase(it);
    else
      ++it;
  }
  return fused;
}

}  // namespace shoal
