// Static shapes for ONNX graph inputs, whose dimensions may be symbolic
// (dim_param) or missing: shoal plans for one fixed shape.
#ifndef SHOAL_ONNX_INPUT_SHAPES_H_
#define SHOAL_ONNX_INPUT_SHAPES_H_

#include <onnx/onnx_pb.h>

#include <optional>

#include "graph/shape.h"
#include "util/status.h"

namespace shoal {

// The shape of graph input `vi`: `override_shape` when given (the
// --input-shape flag; same rank as declared), else the declared dims with an
// unknown first dim read as batch 1. Other unknown dims are an error that
// suggests --input-shape. `*replaced_fixed` tells whether the override
// changed a fixed declared dim. Non-float inputs are Unsupported.
StatusOr<Shape> ResolveInputShape(const onnx::ValueInfoProto& vi,
                                  const std::optional<Shape>& override_shape,
                                  bool* replaced_fixed);

// "1x3x?x?" for a declared (possibly partial) shape.
std::string DeclaredShapeToString(const onnx::TensorShapeProto& s);

}  // namespace shoal

#endif  // SHOAL_ONNX_INPUT_SHAPES_H_
