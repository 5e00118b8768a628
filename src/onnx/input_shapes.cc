#include "onnx/input_shapes.h"

#include "onnx/onnx_tensor.h"

namespace shoal {

std::string DeclaredShapeToString(const onnx::TensorShapeProto& s) {
  std::string out;
  for (int i = 0; i < s.dim_size(); ++i) {
    if (i) out += "x";
    const auto& d = s.dim(i);
    if (d.has_dim_value())
      out += std::to_string(d.dim_value());
    else if (d.has_dim_param())
      out += d.dim_param();
    else
      out += "?";
  }
  return s.dim_size() ? out : "scalar";
}

StatusOr<Shape> ResolveInputShape(const onnx::ValueInfoProto& vi,
                                  const std::optional<Shape>& override_shape,
                                  bool* replaced_fixed) {
  *replaced_fixed = false;
  const std::string what = "graph input '" + vi.name() + "'";
  if (!vi.type().has_tensor_type()) {
    return Unsupported(what + " is not a tensor");
  }
  const auto& tt = vi.type().tensor_type();
  if (tt.elem_type() != 0 && !IsFloatType(tt.elem_type())) {
    return Unsupported(
        what + " has type " +
        onnx::TensorProto::DataType_Name(
            static_cast<onnx::TensorProto::DataType>(tt.elem_type())) +
        "; shoal computes on float tensors");
  }
  const bool has_shape = tt.has_shape();
  const auto& declared = tt.shape();
  if (override_shape) {
    if (has_shape &&
        declared.dim_size() != static_cast<int>(override_shape->size())) {
      return InvalidArgument("--input-shape " + ShapeToString(*override_shape) +
                             " has rank " +
                             std::to_string(override_shape->size()) + " but " +
                             what + " is " + DeclaredShapeToString(declared));
    }
    for (int i = 0; has_shape && i < declared.dim_size(); ++i) {
      const auto& d = declared.dim(i);
      if (d.has_dim_value() && d.dim_value() != (*override_shape)[i]) {
        *replaced_fixed = true;
      }
    }
    for (int64_t d : *override_shape) {
      if (d <= 0) return InvalidArgument("--input-shape must be positive");
    }
    return *override_shape;
  }
  if (!has_shape) {
    return InvalidArgument(what +
                           " has no declared shape; give it with "
                           "--input-shape, e.g. --input-shape 1,3,224,224");
  }
  Shape s;
  for (int i = 0; i < declared.dim_size(); ++i) {
    const auto& d = declared.dim(i);
    if (d.has_dim_value() && d.dim_value() > 0) {
      s.push_back(d.dim_value());
    } else if (d.has_dim_value()) {
      return InvalidArgument(what + " has an empty or negative dimension " +
                             std::to_string(i));
    } else if (i == 0) {
      s.push_back(1);  // a symbolic batch: shoal runs batch 1
    } else {
      return InvalidArgument(
          what + " has a dynamic dimension " + std::to_string(i) + " ('" +
          (d.has_dim_param() ? d.dim_param() : std::string("?")) + "' in " +
          DeclaredShapeToString(declared) +
          "); give the full shape with --input-shape, e.g. --input-shape "
          "1,3,224,224");
    }
  }
  return s;
}

}  // namespace shoal
