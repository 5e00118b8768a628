#include "onnx/onnx_import.h"
namespace shoal {
StatusOr<Model> ImportOnnx(const std::string& path, const OnnxImportOptions&) {
  return Unsupported("ONNX import: work in progress (" + path + ")");
}
}  // namespace shoal
