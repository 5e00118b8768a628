#include "graph/verify.h"

#include <set>

#include "graph/op_registry.h"
#include "graph/shape_inference.h"

namespace shoal {

Status VerifyGraph(const Graph& g) {
  std::set<std::string> names;
  std::set<std::string> defined;
  for (const auto& in : g.inputs) {
    const TensorInfo* t = g.FindTensor(in);
    if (!t || t->is_weight()) {
      return InvalidArgument("graph input '" + in + "' is not an activation");
    }
    defined.insert(in);
  }
  for (const auto& [name, t] : g.tensors)
    if (t.is_weight()) defined.insert(name);

  for (const auto& node : g.nodes) {
    if (node.name.empty()) return InvalidArgument("a node has no name");
    if (!names.insert(node.name).second) {
      return InvalidArgument("node name '" + node.name + "' used twice");
    }
    const OpSchema* op = OpRegistry::Global().Find(node.op);
    if (!op) {
      return Unsupported("op '" + node.op + "' (node '" + node.name +
                         "') is not supported");
    }
    for (const auto& [k, v] : node.attrs.map()) {
      if (!op->attrs().count(k)) {
        return Unsupported("attribute '" + k + "' of node '" + node.name +
                           "' (" + node.op + ") is not supported");
      }
    }
    for (const auto& in : node.inputs) {
      if (!in.empty() && !defined.count(in)) {
        return InvalidArgument("node '" + node.name + "' reads '" + in +
                               "' before it is defined (or it never is)");
      }
    }
    ASSIGN_OR_RETURN(InputShapes in, GatherInputShapes(g, node));
    std::vector<Shape> out;
    RETURN_IF_ERROR(op->InferShapes(node, in, &out));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const std::string& o = node.outputs[i];
      if (o.empty()) continue;
      if (!defined.insert(o).second) {
        return InvalidArgument("tensor '" + o + "' is defined twice");
      }
      const TensorInfo* t = g.FindTensor(o);
      if (!t || !t->shaped || t->shape != out[i]) {
        return InvalidArgument(
            "tensor '" + o + "' of node '" + node.name + "' has shape " +
            (t && t->shaped ? ShapeToString(t->shape) : "unknown") +
            " but its op gives " + ShapeToString(out[i]));
      }
    }
  }
  if (g.outputs.empty()) return InvalidArgument("graph has no outputs");
  for (const auto& o : g.outputs) {
    if (!defined.count(o)) {
      return InvalidArgument("graph output '" + o + "' is never computed");
    }
  }
  return Status::Ok();
}

}  // namespace shoal
