#include "onnx/unsupported_ops.h"

#include <map>

#include "graph/op_registry.h"
#include "onnx/convert_rules.h"
#include "onnx/einsum.h"
#include "onnx/fold_constants.h"

namespace shoal {

namespace {

bool Known(const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
  const std::string& op = n.op_type();
  return OpRegistry::Global().Find(op) != nullptr ||
         FindConvertRule(op) != nullptr || IsFoldableOp(op) ||
         IsMatMulEinsum(n);
}

}  // namespace

std::vector<UnsupportedOp> FindUnsupportedOps(const onnx::GraphProto& g) {
  std::vector<UnsupportedOp> out;
  std::map<std::string, size_t> index;
  for (int i = 0; i < g.node_size(); ++i) {
    const onnx::NodeProto& n = g.node(i);
    if (Known(n)) continue;
    const std::string op = n.domain().empty() || n.domain() == "ai.onnx"
                               ? n.op_type()
                               : n.domain() + "::" + n.op_type();
    auto [it, added] = index.emplace(op, out.size());
    if (added) {
      out.push_back(UnsupportedOp{
          op, 0, n.name().empty() ? "#" + std::to_string(i) : n.name()});
    }
    ++out[it->second].count;
  }
  return out;
}

Status UnsupportedOpsError(const std::vector<UnsupportedOp>& ops) {
  if (ops.empty()) return Status::Ok();
  std::string msg = std::to_string(ops.size()) + " unsupported operator" +
                    (ops.size() == 1 ? "" : "s") + ": ";
  for (size_t i = 0; i < ops.size(); ++i) {
    const UnsupportedOp& u = ops[i];
    if (i > 0) msg += "; ";
    msg += "'" + u.op + "' (" + std::to_string(u.count) + " node" +
           (u.count == 1 ? "" : "s") + ", first '" + u.first_node + "')";
  }
  return Unsupported(msg + " (docs/operators.md lists what shoal supports)");
}

}  // namespace shoal
