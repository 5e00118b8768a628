#include "partition/transformer_blocks.h"

#include <algorithm>
#include <set>
#include <utility>

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
    const bool pass =
        Carries(g, n) ||
        (also_reduce && SplitFactsOf(n.op).non_reduced && n.inputs.size() == 1);
    if (!pass) return &n;
    tensor = SoleActivation(g, n);
  }
}

int64_t LastAxis(const Graph& g, const std::string& tensor) {
  const TensorInfo* t = g.FindTensor(tensor);
  return t == nullptr || t->shape.empty() ? -1 : t->shape.back();
}

// The fc layer whose output columns [*begin, *end) `tensor` carries: past
// the nodes that carry it and at most one crop of the columns alone (one
// of Q, K and V from a projection that packs them), then past reshapes
// that keep the columns the last axis. Null when there is none.
const Node* ProjectionOf(const Graph& g, const std::string& tensor,
                         int64_t* begin, int64_t* end) {
  const Node* n = BackPast(g, tensor, false);
  if (n == nullptr) return nullptr;
  if (IsFcLayer(g, *n)) {
    *begin = 0;
    *end = OutputSplitSize(g, *n);
    return n;
  }
  if (!SplitFactsOf(n->op).crops || n->outputs.size() != 1) return nullptr;
  const std::string in = SoleActivation(g, *n);
  const TensorInfo* ti = in.empty() ? nullptr : g.FindTensor(in);
  if (ti == nullptr) return nullptr;
  auto box = CropOf(*n, ti->shape);
  if (!box) return nullptr;
  const size_t last = ti->shape.size() - 1;
  for (size_t a = 0; a < last; ++a) {
    if (box->first[a] != 0 || box->second[a] != ti->shape[a]) return nullptr;
  }
  const int64_t cols = ti->shape[last];
  std::string t = in;
  for (;;) {
    const int p = g.ProducerIndex(t);
    if (p < 0) return nullptr;
    const Node& m = g.nodes[p];
    if (IsFcLayer(g, m)) {
      if (OutputSplitSize(g, m) != cols || LastAxis(g, t) != cols) {
        return nullptr;
      }
      *begin = box->first[last];
      *end = box->second[last];
      return &m;
    }
    const std::string from = SoleActivation(g, m);
    if (!SplitFactsOf(m.op).relayout || m.outputs.size() != 1 || from.empty() ||
        LastAxis(g, from) != cols || LastAxis(g, t) != cols) {
      return nullptr;
    }
    t = from;
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
    int64_t qb = 0, qe = 0, kb = 0, ke = 0, vb = 0, ve = 0;
    const Node* q = ProjectionOf(g, scores->inputs[0], &qb, &qe);
    const Node* k = ProjectionOf(g, scores->inputs[1], &kb, &ke);
    const Node* v = ProjectionOf(g, ctx.inputs[1], &vb, &ve);
    const Node* o = ForwardToLayer(g, ctx.outputs[0]);
    if (q == nullptr || k == nullptr || v == nullptr || o == nullptr) {
      continue;
    }
    // The heads: the scores' batch axes.
    const Shape& s = g.tensors.at(scores->outputs[0]).shape;
    if (s.size() < 3) continue;
    int64_t heads = 1;
    for (size_t a = 0; a + 2 < s.size(); ++a) heads *= s[a];
    const int64_t cols = qe - qb;
    if (heads < 2 || cols % heads != 0 || ke - kb != cols || ve - vb != cols ||
        InputSplitSize(g, *o) != cols) {
      continue;
    }
    AttentionBlock block{q->name, k->name, v->name,
                         o->name, heads,   cols / heads};
    block.q_begin = qb;
    block.k_begin = kb;
    block.v_begin = vb;
    // A layer packing several of them holds each in one of its equal
    // segments, and nothing else.
    const std::pair<const Node*, int64_t> sources[] = {
        {q, qb}, {k, kb}, {v, vb}};
    bool packed_ok = true;
    for (const auto& source : sources) {
      const Node* p = source.first;
      std::set<int64_t> begins;
      int64_t m = 0;
      for (const auto& [node, begin] : sources) {
        if (node != p) continue;
        ++m;
        begins.insert(begin);
      }
      packed_ok &= static_cast<int64_t>(begins.size()) == m &&
                   OutputSplitSize(g, *p) == m * cols &&
                   *begins.rbegin() == (m - 1) * cols;
      for (int64_t b0 : begins) packed_ok &= b0 % cols == 0;
    }
    if (packed_ok) out.push_back(block);
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
        // Elementwise ops, and reshapes that keep the features the last
        // axis (a Linear over [1, T, K] imported as Reshape, Gemm, Reshape).
        const bool keeps_features = SplitFactsOf(n.op).relayout &&
                                    n.outputs.size() == 1 &&
                                    LastAxis(g, n.outputs[0]) == LastAxis(g, t);
        if (s == nullptr || (!s->elementwise() && !keeps_features) ||
            n.outputs.size() != 1) {
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
