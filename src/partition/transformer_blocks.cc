#include "partition/transformer_blocks.h"

#include <algorithm>
#include <set>

#include "graph/op_registry.h"
#include "partition/layer_split.h"

namespace shoal {

namespace {

// The one activation input of `n` when its other inputs are scalar
// constants; empty otherwise.
std::string SoleActivation(const Graph& g, const Node& n) {
  std::string act;
  for (const auto& in : n.inputs) {
    if (in.empty()) return "";
    const TensorInfo* t = g.FindTensor(in);
    if (t == nullptr) return "";
    if (t->is_weight()) {
      if (NumElements(t->shape) != 1) return "";
      continue;
    }
    if (!act.empty()) return "";
    act = in;
  }
  return act;
}

// Moves or scales its one activation input without mixing its elements
// across heads: a reshape, a permutation, an elementwise op by constants.
bool Carries(const Graph& g, const Node& n) {
  const SplitFacts& f = SplitFactsOf(n.op);
  const OpSchema* s = OpRegistry::Global().Find(n.op);
  const bool kind = f.relayout || f.permutes || (s && s->elementwise());
  return kind && n.outputs.size() == 1 && !SoleActivation(g, n).empty();
}

// The node producing `tensor`, past the nodes that carry it.
const Node* BackPast(const Graph& g, std::string tensor, bool also_reduce) {
  for (;;) {
    const int p = g.ProducerIndex(tensor);
    if (p < 0) return nullptr;
    const Node& n = g.nodes[p];
    const bool pass = Carries(g, n) ||
                      (also_reduce && SplitFactsOf(n.op).non_reduced &&
                       n.inputs.size() == 1);
    if (!pass) return &n;
    tensor = SoleActivation(g, n);
  }
}

// The fc layer that `tensor` reaches through carrying nodes, each the one
// reader of the previous; null if another node comes first.
const Node* ForwardToLayer(const Graph& g, std::string tensor) {
  for (;;) {
    const auto cons = g.ConsumerIndices(tensor);
    if (cons.size() != 1) return nullptr;
    const Node& n = g.nodes[cons[0]];
    if (IsFcLayer(g, n) && n.inputs[0] == tensor) return &n;
    if (!Carries(g, n)) return nullptr;
    tensor = n.outputs[0];
  }
}

bool IsActivation(const Graph& g, const std::string& t) {
  const TensorInfo* i = g.FindTensor(t);
  return i != nullptr && !i->is_weight();
}

}  // namespace

std::vector<AttentionBlock> FindAttentionBlocks(const Graph& g) {
  std::vector<AttentionBlock> out;
  for (const auto& ctx : g.nodes) {
    if (!SplitFactsOf(ctx.op).batch_product || ctx.inputs.size() != 2 ||
        !IsActivation(g, ctx.inputs[0]) || !IsActivation(g, ctx.inputs[1])) {
      continue;
    }
    const Node* scores = BackPast(g, ctx.inputs[0], true);
    if (scores == nullptr || !SplitFactsOf(scores->op).batch_product ||
        scores->inputs.size() != 2) {
      continue;
    }
    const Node* q = BackPast(g, scores->inputs[0], false);
    const Node* k = BackPast(g, scores->inputs[1], false);
    const Node* v = BackPast(g, ctx.inputs[1], false);
    const Node* o = ForwardToLayer(g, ctx.outputs[0]);
    if (q == nullptr || k == nullptr || v == nullptr || o == nullptr ||
        !IsFcLayer(g, *q) || !IsFcLayer(g, *k) || !IsFcLayer(g, *v)) {
      continue;
    }
    // The heads: the scores' batch axes.
    const Shape& s = g.tensors.at(scores->outputs[0]).shape;
    if (s.size() < 3) continue;
    int64_t heads = 1;
    for (size_t a = 0; a + 2 < s.size(); ++a) heads *= s[a];
    const int64_t cols = OutputSplitSize(g, *q);
    if (heads < 2 || cols % heads != 0 || OutputSplitSize(g, *k) != cols ||
        OutputSplitSize(g, *v) != cols || InputSplitSize(g, *o) != cols) {
      continue;
    }
    out.push_back(
        AttentionBlock{q->name, k->name, v->name, o->name, heads, cols / heads});
  }
  return out;
}

std::vector<MlpBlock> FindMlpBlocks(const Graph& g,
                                    const std::vector<std::string>& taken) {
  const std::set<std::string> skip(taken.begin(), taken.end());
  std::vector<MlpBlock> out;
  for (const auto& up : g.nodes) {
    if (skip.count(up.name) || !IsFcLayer(g, up)) continue;
    // Every node reached from up's output must be elementwise on tensors
    // reached so (or scalar constants), up to one fc layer.
    std::set<std::string> reached = {up.outputs[0]};
    std::vector<std::string> todo = {up.outputs[0]};
    std::vector<const Node*> between;
    const Node* down = nullptr;
    bool ok = true;
    while (ok && !todo.empty()) {
      const std::string t = todo.back();
      todo.pop_back();
      if (std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end())
        ok = false;
      for (int c : g.ConsumerIndices(t)) {
        const Node& n = g.nodes[c];
        if (IsFcLayer(g, n) && n.inputs[0] == t && !skip.count(n.name)) {
          if (down != nullptr && down != &n) ok = false;
          down = &n;
          continue;
        }
        const OpSchema* s = OpRegistry::Global().Find(n.op);
        if (s == nullptr || !s->elementwise() || n.outputs.size() != 1) {
          ok = false;
          break;
        }
        between.push_back(&n);
        if (reached.insert(n.outputs[0]).second) todo.push_back(n.outputs[0]);
      }
    }
    // What runs between them reads only what up computed, and constants:
    // a residual's sum, which reads another tensor, ends the MLP.
    for (const Node* n : between) {
      for (const auto& in : n->inputs) {
        const TensorInfo* ti = g.FindTensor(in);
        if (ti == nullptr) {
          ok = false;
        } else if (ti->is_weight()) {
          ok &= NumElements(ti->shape) == 1;
        } else {
          ok &= reached.count(in) > 0;
        }
      }
    }
    if (ok && down != nullptr && down != &up) {
      out.push_back(MlpBlock{up.name, down->name});
    }
  }
  return out;
}

}  // namespace shoal
