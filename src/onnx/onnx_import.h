// ONNX import with the ONNX protobuf library.
#ifndef SHOAL_ONNX_ONNX_IMPORT_H_
#define SHOAL_ONNX_ONNX_IMPORT_H_

#include <optional>
#include <string>

#include "graph/weights.h"
#include "util/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace shoal {

struct OnnxImportOptions {
  // Overrides the first graph input's shape (dynamic or fixed dimensions).
  std::optional<Shape> input_shape;
  // Keep initializer data (false: structure only, weights are not read).
  bool load_weights = true;
  // Fold BatchNormalization into the preceding Conv where it is its only
  // reader. With weights, the conv's weight and bias are recomputed;
  // without, only the structure changes.
  bool fuse_batchnorm = false;
};

// Reads `path` (external data files are resolved next to it). Errors name
// the file and, for unsupported ops or attributes, the node
// (Code::kUnsupported).
StatusOr<Model> ImportOnnx(const std::string& path,
                           const OnnxImportOptions& opts);

// Imports a model already in memory. `source` names it in errors; external
// data files are resolved under `base_dir`.
StatusOr<Model> ImportOnnxModel(const onnx::ModelProto& model,
                                const std::string& source,
                                const std::string& base_dir,
                                const OnnxImportOptions& opts);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_IMPORT_H_
