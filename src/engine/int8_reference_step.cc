#include "engine/int8_reference_step.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/reference_step.h"
#include "kernels/reference/int8_kernels.h"

namespace shoal {
namespace {

// The DQ producing `tensor` and its parameters, or nullopt.
std::optional<std::pair<const Node*, QuantParams>> DequantOf(
    const ExecBuilder& b, const std::string& tensor) {
  const int p = b.graph().ProducerIndex(tensor);
  if (p < 0) return std::nullopt;
  const Node& dq = b.graph().nodes[p];
  if (dq.op != "DequantizeLinear" || dq.inputs.empty()) return std::nullopt;
  const TensorInfo* q = b.graph().FindTensor(dq.inputs[0]);
  if (!q || (q->is_weight() && !b.Weight(dq.inputs[0]))) return std::nullopt;
  auto params = ReadQuantParams(dq, q->shape);
  if (!params.ok()) return std::nullopt;
  return std::make_pair(&dq, *params);
}

}  // namespace

std::optional<Int8RefLayer> MatchInt8RefLayer(const ExecBuilder& b,
                                              const Node& layer) {
  if (b.use_onednn() || !Int8KernelRegistry::Global().Find(layer.op) ||
      layer.inputs.size() < 2 || layer.inputs[0].empty() ||
      layer.inputs[1].empty())
    return std::nullopt;
  auto x = DequantOf(b, layer.inputs[0]);
  auto w = DequantOf(b, layer.inputs[1]);
  if (!x || !w || !x->second.per_tensor()) return std::nullopt;
  const TensorInfo* wt = b.graph().FindTensor(layer.inputs[1]);
  if (!w->second.per_tensor() &&
      w->second.axis != Int8OutputChannelAxis(layer, wt->shape.size()))
    return std::nullopt;
  return Int8RefLayer{x->first, w->first, x->second, w->second};
}

void MarkInt8RefFusions(ExecBuilder& b) {
  std::set<const Node*> dequants;
  for (const Node& n : b.graph().nodes) {
    if (auto l = MatchInt8RefLayer(b, n)) {
      dequants.insert(l->x_dequant);
      dequants.insert(l->w_dequant);
    }
  }
  // A DQ runs unless int8 layers are all that read its output, and read it
  // as their int8 operands (not, say, as a Gemm's C).
  for (const Node* dq : dequants) {
    const std::string& y = dq->outputs[0];
    bool only_int8 = !b.IsGraphOutput(y);
    for (const Node* reader : b.Consumers(y)) {
      if (!only_int8) break;
      auto l = MatchInt8RefLayer(b, *reader);
      only_int8 = l.has_value();
      for (size_t k = 2; only_int8 && k < reader->inputs.size(); ++k)
        only_int8 = reader->inputs[k] != y;
    }
    if (only_int8) b.MarkFused(dq->name);
  }
}

StatusOr<bool> AddInt8ReferenceStep(ExecBuilder& b, const Node& node) {
  auto l = MatchInt8RefLayer(b, node);
  if (!l) return false;
  Int8KernelFn fn = Int8KernelRegistry::Global().Find(node.op);
  std::vector<std::string> inputs = node.inputs;
  inputs[0] = l->x_dequant->inputs[0];
  inputs[1] = l->w_dequant->inputs[0];
  RETURN_IF_ERROR(AddReferenceStep(
      b, node, inputs,
      [fn, x = l->x, w = l->w](const Node& n, const std::vector<ConstView>& in,
                               const std::vector<MutView>& out) {
        return fn(n, in, x, w, out);
      }));
  return true;
}

}  // namespace shoal
