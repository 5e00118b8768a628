// ONNX export of a shoal graph, with or without weights.
#ifndef SHOAL_ONNX_ONNX_EXPORT_H_
#define SHOAL_ONNX_ONNX_EXPORT_H_

#include <string>

#include "graph/weights.h"
#include "util/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace shoal {

// Writes `model` as an ONNX file (opset 13; 14 when it has HardSwish, which
// opset 13 lacks; ir_version 7). Without weights, initializers are written
// with their shapes and zero data so other tools can load it.
Status ExportOnnx(const Model& model, const std::string& path);

// The same, into memory. Shoal attributes that opset 13 takes as inputs
// (Reshape's shape, Slice's starts..., Pad's pads and value, Clip's bounds,
// Split's sizes, Dropout's ratio) become int64 / float initializers.
Status ModelToOnnx(const Model& model, onnx::ModelProto* out);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_EXPORT_H_
