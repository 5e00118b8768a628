#include "graph/shape_inference.h"

#include "graph/shape_check.h"

namespace shoal {

StatusOr<InputShapes> GatherInputShapes(const Graph& g, const Node& node) {
  InputShapes in;
  for (const auto& name : node.inputs) {
    if (name.empty()) {
      in.shapes.emplace_back();
      in.present.push_back(false);
      continue;
    }
    const TensorInfo* t = g.FindTensor(name);
    if (!t) {
      return InvalidArgument("node '" + node.name + "' reads unknown tensor '" +
                             name + "'");
    }
    if (!t->shaped) {
      return InvalidArgument("node '" + node.name + "' reads tensor '" + name +
                             "' before its shape is known");
    }
    in.shapes.push_back(t->shape);
    in.present.push_back(true);
  }
  return in;
}

Status InferNodeShapes(const Graph& g, const Node& node,
                       std::vector<Shape>* out) {
  const OpSchema* op = OpRegistry::Global().Find(node.op);
  if (!op) {
    return Unsupported("op '" + node.op + "' (node '" + node.name +
                       "') is not supported");
  }
  ASSIGN_OR_RETURN(InputShapes in, GatherInputShapes(g, node));
  out->clear();
  RETURN_IF_ERROR(op->InferShapes(node, in, out));
  for (size_t i = 0; i < node.outputs.size() && i < out->size(); ++i) {
    if (node.outputs[i].empty()) continue;
    for (int64_t d : (*out)[i]) {
      if (d <= 0) {
        return ShapeError(node, "output '" + node.outputs[i] + "' would be " +
                                    ShapeToString((*out)[i]) +
                                    " (an empty or negative extent)");
      }
    }
    // Huge inputs (a plan or model from a file) must not give a count
    // that wraps in the cost model or the engine's allocations.
    RETURN_IF_ERROR(CheckShape((*out)[i], "output '" + node.outputs[i] +
                                              "' of node '" + node.name + "'"));
  }
  return Status::Ok();
}

Status InferShapes(Graph* g) {
  RETURN_IF_ERROR(g->TopoSort());
  for (auto& node : g->nodes) {
    std::vector<Shape> out;
    RETURN_IF_ERROR(InferNodeShapes(*g, node, &out));
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      if (node.outputs[i].empty()) continue;
      TensorInfo* t = g->FindTensor(node.outputs[i]);
      t->shape = out[i];
      t->shaped = true;
    }
  }
  return Status::Ok();
}

}  // namespace shoal
