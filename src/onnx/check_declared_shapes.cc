#include "onnx/check_declared_shapes.h"

#include "onnx/input_shapes.h"

namespace shoal {
namespace {

Status CheckOne(const onnx::ValueInfoProto& vi, const Graph& g,
                const std::function<std::string(const std::string&)>& resolve) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) {
    return Status::Ok();
  }
  const TensorInfo* t = g.FindTensor(resolve(vi.name()));
  if (!t || t->is_weight() || !t->shaped) return Status::Ok();
  const auto& declared = vi.type().tensor_type().shape();
  bool same = declared.dim_size() == static_cast<int>(t->shape.size());
  for (int i = 0; same && i < declared.dim_size(); ++i) {
    const auto& d = declared.dim(i);
    if (d.has_dim_value() && d.dim_value() != t->shape[i]) same = false;
  }
  if (same) return Status::Ok();
  return InvalidArgument("tensor '" + vi.name() +
                         "': the file declares shape " +
                         DeclaredShapeToString(declared) +
                         " but shoal infers " + ShapeToString(t->shape));
}

}  // namespace

Status CheckDeclaredShapes(
    const onnx::GraphProto& onnx_graph, const Graph& g,
    const std::function<std::string(const std::string&)>& resolve) {
  for (const auto& vi : onnx_graph.value_info())
    RETURN_IF_ERROR(CheckOne(vi, g, resolve));
  for (const auto& vi : onnx_graph.output())
    RETURN_IF_ERROR(CheckOne(vi, g, resolve));
  return Status::Ok();
}

}  // namespace shoal
