// ONNX export of a shoal graph, with or without weights.
#ifndef SHOAL_ONNX_ONNX_EXPORT_H_
#define SHOAL_ONNX_ONNX_EXPORT_H_

#include <string>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// Writes `model` as an ONNX file (opset 13). Without weights, initializers
// are written with their shapes and zero data so other tools can load it.
Status ExportOnnx(const Model& model, const std::string& path);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_EXPORT_H_
