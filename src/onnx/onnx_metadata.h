// ONNX's metadata_props as ModelMetadata, read from and written into a
// ModelProto; and export with them.
#ifndef SHOAL_ONNX_ONNX_METADATA_H_
#define SHOAL_ONNX_ONNX_METADATA_H_

#include <string>

#include "graph/model_metadata.h"
#include "graph/weights.h"
#include "util/status.h"

namespace onnx {
class ModelProto;
}  // namespace onnx

namespace shoal {

// Every metadata_props entry; of a key given twice, the last.
ModelMetadata ReadMetadataProps(const onnx::ModelProto& proto);

// Sets each key of `metadata` in proto's metadata_props (replacing an entry
// with the same key, keeping the others).
void WriteMetadataProps(const ModelMetadata& metadata, onnx::ModelProto* proto);

// ExportOnnx (onnx/onnx_export.h) with `metadata` in the file's
// metadata_props.
Status ExportOnnxWithMetadata(const Model& model, const ModelMetadata& metadata,
                              const std::string& path);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_METADATA_H_
