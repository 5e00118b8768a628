#include "graph/insert_qdq.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "graph/shape_inference.h"
#include "graph/verify.h"

namespace shoal {
namespace {

// The axis of `n`'s weight (input 1) that indexes its output channels: a
// Conv's first, a Gemm's N axis, a MatMul's last; -1 for a 1-D MatMul
// weight, which has a single output.
int64_t OutputChannelAxis(const Node& n, const Shape& w) {
  if (n.op == "Conv") return 0;
  if (n.op == "Gemm") return n.attrs.GetInt("transB", 0) != 0 ? 0 : 1;
  return w.size() >= 2 ? static_cast<int64_t>(w.size()) - 1 : -1;
}

// Indices of the nodes to quantize: a Conv, Gemm or MatMul reading an
// activation and a weight with data, that weight read by no other kind of
// input (its data becomes int8).
std::vector<int> QuantizableNodes(const Model& m) {
  const Graph& g = m.graph;
  auto candidate = [&](const Node& n) {
    if (n.op != "Conv" && n.op != "Gemm" && n.op != "MatMul") return false;
    if (n.inputs.size() < 2) return false;
    const TensorInfo* x = g.FindTensor(n.inputs[0]);
    const TensorInfo* w = g.FindTensor(n.inputs[1]);
    return x && !x->is_weight() && w && w->is_weight() &&
           m.weights.count(n.inputs[1]) && n.inputs[0] != n.inputs[1];
  };
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(g.nodes.size()); ++i) {
    const Node& n = g.nodes[i];
    if (!candidate(n)) continue;
    bool only_weight_input = true;
    for (int c : g.ConsumerIndices(n.inputs[1])) {
      const Node& r = g.nodes[c];
      for (size_t k = 0; k < r.inputs.size(); ++k)
        if (r.inputs[k] == n.inputs[1] && (k != 1 || !candidate(r)))
          only_weight_input = false;
    }
    if (only_weight_input) out.push_back(i);
  }
  return out;
}

std::string FreshName(const std::string& base,
                      const std::set<std::string>& taken) {
  std::string name = base;
  for (int k = 2; taken.count(name); ++k) name = base + "_" + std::to_string(k);
  return name;
}

}  // namespace

void ValueRange::Add(const float* v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) continue;
    if (!seen) lo = hi = v[i];
    seen = true;
    lo = std::min(lo, v[i]);
    hi = std::max(hi, v[i]);
  }
}

std::vector<std::string> QdqActivations(const Model& m) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (int i : QuantizableNodes(m)) {
    const std::string& x = m.graph.nodes[i].inputs[0];
    if (seen.insert(x).second) out.push_back(x);
  }
  return out;
}

QuantParams ActivationQuantParams(const ValueRange& r) {
  QuantParams p;
  if (r.lo >= 0.f) {
    p.scale = {r.hi > 0.f ? r.hi / 255.f : 1.f};
    p.zero_point = {kInt8Min};
  } else {
    p.scale = {SymmetricScale(std::max(-r.lo, r.hi))};
    p.zero_point = {0};
  }
  return p;
}

QuantParams WeightQuantParams(const Tensor& w, int64_t axis, Tensor* q) {
  const int64_t channels = axis < 0 ? 1 : w.shape[axis];
  int64_t inner = 1;
  for (size_t i = axis + 1; axis >= 0 && i < w.shape.size(); ++i)
    inner *= w.shape[i];
  if (axis < 0) inner = w.size();
  std::vector<float> absmax(channels, 0.f);
  for (int64_t i = 0; i < w.size(); ++i) {
    const int64_t c = (i / inner) % channels;
    absmax[c] = std::max(absmax[c], std::fabs(w.data[i]));
  }
  QuantParams p;
  for (float a : absmax) p.scale.push_back(SymmetricScale(a));
  p.zero_point.assign(channels, 0);
  p.axis = p.per_tensor() ? -1 : axis;
  *q = Tensor(w.shape);
  ApplyQuant(p, w.shape, true, w.data.data(), q->data.data());
  return p;
}

StatusOr<QdqSummary> InsertQdq(const std::map<std::string, ValueRange>& ranges,
                               Model* m) {
  Graph& g = m->graph;
  const std::vector<int> nodes = QuantizableNodes(*m);
  std::set<std::string> node_names, tensor_names;
  for (const auto& n : g.nodes) node_names.insert(n.name);
  for (const auto& [name, t] : g.tensors) tensor_names.insert(name);
  auto fresh_node = [&](const std::string& base) {
    std::string s = FreshName(base, node_names);
    node_names.insert(s);
    return s;
  };
  auto fresh_tensor = [&](const std::string& base) {
    std::string s = FreshName(base, tensor_names);
    tensor_names.insert(s);
    return s;
  };

  QdqSummary summary;
  std::map<std::string, std::string> dequantized;  // tensor -> its DQ output
  std::vector<Node> added;
  for (int i : nodes) {
    const Node& n = g.nodes[i];
    const std::string x = n.inputs[0], w = n.inputs[1];
    if (!dequantized.count(x)) {
      auto it = ranges.find(x);
      if (it == ranges.end() || !it->second.seen) {
        return FailedPrecondition("no calibrated range for tensor '" + x +
                                  "' (input of node '" + n.name + "')");
      }
      const QuantParams p = ActivationQuantParams(it->second);
      Node q, dq;
      q.name = fresh_node(x + ".quantize");
      q.op = "QuantizeLinear";
      q.inputs = {x};
      q.outputs = {fresh_tensor(x + ".q")};
      SetQuantParams(p, &q);
      dq.name = fresh_node(x + ".dequantize");
      dq.op = "DequantizeLinear";
      dq.inputs = q.outputs;
      dq.outputs = {fresh_tensor(x + ".dq")};
      SetQuantParams(p, &dq);
      dequantized[x] = dq.outputs[0];
      added.push_back(std::move(q));
      added.push_back(std::move(dq));
      ++summary.activations;
    }
    if (!dequantized.count(w)) {
      Tensor& data = m->weights.at(w);
      Tensor q;
      const QuantParams p =
          WeightQuantParams(data, OutputChannelAxis(n, data.shape), &q);
      data = std::move(q);
      Node dq;
      dq.name = fresh_node(w + ".dequantize");
      dq.op = "DequantizeLinear";
      dq.inputs = {w};
      dq.outputs = {fresh_tensor(w + ".dq")};
      SetQuantParams(p, &dq);
      dequantized[w] = dq.outputs[0];
      added.push_back(std::move(dq));
    }
    ++summary.layers;
  }
  for (int i : nodes) {
    Node& n = g.nodes[i];
    n.inputs[0] = dequantized.at(n.inputs[0]);
    n.inputs[1] = dequantized.at(n.inputs[1]);
  }
  for (Node& n : added) RETURN_IF_ERROR(g.AddNode(std::move(n)));
  RETURN_IF_ERROR(InferShapes(&g));
  RETURN_IF_ERROR(VerifyGraph(g));
  return summary;
}

}  // namespace shoal
