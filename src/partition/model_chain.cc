#include "partition/model_chain.h"

#include <set>

#include "graph/cost.h"
#include "graph/op_registry.h"
#include "partition/layer_split.h"

namespace shoal {

namespace {

bool KeepsChannels(const Node& n) {
  const SplitFacts& f = SplitFactsOf(n.op);
  return f.per_channel || f.relayout || (f.any_axis && n.inputs.size() == 1);
}

}  // namespace

bool ReadsDirectly(const Graph& g, const Node& from, const Node& to) {
  std::string cur = from.outputs[0];
  for (int guard = 0; guard < 64; ++guard) {
    if (to.inputs[0] == cur) return true;
    auto cons = g.ConsumerIndices(cur);
    if (cons.size() != 1) return false;
    const Node& c = g.nodes[cons[0]];
    if (!KeepsChannels(c)) return false;
    cur = c.outputs[0];
  }
  return false;
}

int64_t InputUnits(const Graph& g, const Node& n) {
  const Shape& in = g.tensors.at(n.inputs[0]).shape;
  if (WeightLayoutOf(n).feature_map) return in[1];
  // Rows of tokens: the input channels are the columns.
  if (in.size() != 2 || in[0] != 1) return in.back();
  // Walk back through reshapes and elementwise ops to a feature map.
  std::string cur = n.inputs[0];
  for (int guard = 0; guard < 64; ++guard) {
    const Shape& s = g.tensors.at(cur).shape;
    if (s.size() >= 3) {
      return NumElements(in) % s[1] == 0 ? s[1] : in[1];
    }
    const int p = g.ProducerIndex(cur);
    if (p < 0) break;
    const Node& prod = g.nodes[p];
    const bool passes = SplitFactsOf(prod.op).relayout ||
                        (KeepsChannels(prod) && prod.inputs.size() == 1);
    if (!passes || g.ConsumerIndices(prod.outputs[0]).size() != 1) break;
    cur = prod.inputs[0];
  }
  return in[1];
}

std::string SplitOutputEnd(const Graph& g, const Node& n) {
  std::string cur = n.outputs[0];
  for (int guard = 0; guard < 64; ++guard) {
    if (!g.outputs.empty() && cur == g.outputs[0]) break;
    auto cons = g.ConsumerIndices(cur);
    if (cons.size() != 1) break;
    const Node& c = g.nodes[cons[0]];
    if (!KeepsChannels(c)) break;
    const Shape& from = g.tensors.at(cur).shape;
    const Shape& to = g.tensors.at(c.outputs[0]).shape;
    if (!SplitFactsOf(c.op).relayout &&
        (from.size() != to.size() || c.inputs.size() != 1)) {
      break;
    }
    cur = c.outputs[0];
  }
  return cur;
}

StatusOr<std::vector<ChainLayer>> ModelChain(const Graph& g) {
  std::vector<ChainLayer> chain;
  const Node* prev = nullptr;
  for (const auto& n : g.nodes) {
    if (!CheckSplittable(g, n).ok()) continue;
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g, n));
    ChainLayer l;
    l.name = n.name;
    l.M = NumElements(g.tensors.at(n.inputs[0]).shape);
    l.K = NumElements(g.tensors.at(n.outputs[0]).shape);
    l.Q = c.weight_elements;
    l.R = c.macs;
    const Shape& out = g.tensors.at(n.outputs[0]).shape;
    // A Gemm over several rows splits by columns, each `rows` elements.
    if (WeightLayoutOf(n).feature_map || (out.size() == 2 && out[0] > 1)) {
      l.k_units = out[1];
    }
    const int64_t mu = InputUnits(g, n);
    if (mu != l.M) l.m_units = mu;
    const int64_t sent = NumElements(g.tensors.at(SplitOutputEnd(g, n)).shape);
    if (sent != l.K) l.k_sent = sent;
    const int producer = g.ProducerIndex(n.inputs[0]);
    l.input_is_concat = producer >= 0 && Concatenates(g.nodes[producer]);
    if (prev != nullptr && ReadsDirectly(g, *prev, n)) {
      l.reuses_prev = true;
      // Fusing keeps the previous layer's output on its devices, so nothing
      // else may read it.
      chain.back().fusable_with_next =
          g.ConsumerIndices(n.inputs[0]).size() == 1;
    }
    chain.push_back(l);
    prev = &n;
  }
  return chain;
}

}  // namespace shoal
