#include "onnx/onnx_metadata.h"

#include "onnx/onnx_export.h"
#include "onnx/onnx_file.h"

namespace shoal {

ModelMetadata ReadMetadataProps(const onnx::ModelProto& proto) {
  ModelMetadata m;
  for (const auto& p : proto.metadata_props()) m[p.key()] = p.value();
  return m;
}

void WriteMetadataProps(const ModelMetadata& metadata,
                        onnx::ModelProto* proto) {
  for (const auto& [key, value] : metadata) {
    onnx::StringStringEntryProto* entry = nullptr;
    for (auto& p : *proto->mutable_metadata_props())
      if (p.key() == key) entry = &p;
    if (entry == nullptr) entry = proto->add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }
}

Status ExportOnnxWithMetadata(const Model& model, const ModelMetadata& metadata,
                              const std::string& path) {
  onnx::ModelProto proto;
  RETURN_IF_ERROR(ModelToOnnx(model, &proto));
  WriteMetadataProps(metadata, &proto);
  return WriteOnnxFile(proto, path);
}

}  // namespace shoal
