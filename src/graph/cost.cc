#include "graph/cost.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace shoal {

StatusOr<NodeCost> ComputeNodeCost(const Graph& g, const Node& node) {
  const OpSchema* op = OpRegistry::Global().Find(node.op);
  if (!op) return Unsupported("op '" + node.op + "' is not supported");
  NodeCost c;
  c.name = node.name;
  c.op = node.op;
  ASSIGN_OR_RETURN(InputShapes in, GatherInputShapes(g, node));
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!in.Has(i)) continue;
    const TensorInfo* t = g.FindTensor(node.inputs[i]);
    int64_t n = NumElements(t->shape);
    if (t->is_weight()) {
      c.weight_elements += n;
      if (node.op == "DequantizeLinear") c.int8_weight_elements += n;
      if (op->IsParamInput(static_cast<int>(i))) c.params += n;
    } else {
      c.input_elements += n;
    }
  }
  std::vector<Shape> out;
  for (const auto& o : node.outputs) {
    const TensorInfo* t = o.empty() ? nullptr : g.FindTensor(o);
    out.push_back(t ? t->shape : Shape{});
    if (t) c.output_elements += NumElements(t->shape);
  }
  const OpWork w = op->ComputeWork(node, in, out);
  c.macs = w.macs;
  c.gemm = w.gemm;
  c.mac_kind = w.kind;
  return c;
}

StatusOr<GraphCost> ComputeGraphCost(const Graph& g) {
  GraphCost total;
  // A weight shared by several nodes is stored once; count it once.
  std::set<std::string> seen_weights;
  for (const auto& node : g.nodes) {
    ASSIGN_OR_RETURN(NodeCost c, ComputeNodeCost(g, node));
    total.macs += c.macs;
    const OpSchema* op = OpRegistry::Global().Find(node.op);
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      const TensorInfo* t = g.FindTensor(node.inputs[i]);
      if (!t || !t->is_weight() || !seen_weights.insert(t->name).second)
        continue;
      int64_t n = NumElements(t->shape);
      total.weight_elements += n;
      if (node.op == "DequantizeLinear") total.int8_weight_elements += n;
      if (op->IsParamInput(static_cast<int>(i))) total.params += n;
    }
    total.nodes.push_back(std::move(c));
  }
  total.peak_activation_bytes = PeakActivationBytes(g);
  return total;
}

int64_t PeakActivationBytes(const Graph& g) {
  const int n = static_cast<int>(g.nodes.size());
  std::unordered_map<std::string, int> last_use;
  for (int i = 0; i < n; ++i)
    for (const auto& in : g.nodes[i].inputs) last_use[in] = i;
  for (const auto& o : g.outputs) last_use[o] = n;  // kept to the end

  auto bytes_of = [&g](const std::string& t) -> int64_t {
    const TensorInfo* info = g.FindTensor(t);
    if (!info || info->is_weight()) return 0;
    return NumElements(info->shape) * kBytesPerElement;
  };

  int64_t live = 0;
  for (const auto& in : g.inputs) live += bytes_of(in);
  int64_t peak = live;
  for (int i = 0; i < n; ++i) {
    const Node& node = g.nodes[i];
    for (const auto& o : node.outputs)
      if (!o.empty()) live += bytes_of(o);
    peak = std::max(peak, live);
    std::set<std::string> freed;
    for (const auto& in : node.inputs) {
      if (in.empty() || freed.count(in)) continue;
      auto it = last_use.find(in);
      if (it != last_use.end() && it->second == i) {
        live -= bytes_of(in);
        freed.insert(in);
      }
    }
    // Outputs nobody reads (e.g. an unused Split part) die at once.
    for (const auto& o : node.outputs)
      if (!o.empty() && !last_use.count(o)) live -= bytes_of(o);
  }
  return peak;
}

}  // namespace shoal
