#include "models/load_model.h"

#include "graph/fuse_batchnorm.h"
#include "models/zoo.h"
#include "onnx/onnx_file.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_metadata.h"

namespace shoal {

StatusOr<Model> LoadModel(const std::string& spec, const LoadOptions& opts) {
  return LoadModel(spec, opts, nullptr);
}

StatusOr<Model> LoadModel(const std::string& spec, const LoadOptions& opts,
                          ModelMetadata* metadata) {
  if (metadata != nullptr) metadata->clear();
  if (const ZooEntry* e = Zoo::Global().Find(spec)) {
    Shape in = opts.input_shape.value_or(e->input_shape);
    Model m;
    ASSIGN_OR_RETURN(m.graph, e->build(in));
    if (opts.with_weights) m.weights = RandomWeights(m.graph, opts.seed);
    if (opts.fuse_batchnorm) RETURN_IF_ERROR(FuseBatchNorm(&m).status());
    return m;
  }
  bool looks_like_file =
      spec.find('/') != std::string::npos ||
      (spec.size() > 5 && spec.substr(spec.size() - 5) == ".onnx");
  if (!looks_like_file) {
    std::string names;
    for (const auto& e : Zoo::Global().entries()) names += " " + e.name;
    return NotFound("'" + spec +
                    "' is neither a zoo model nor an .onnx file (zoo:" + names +
                    ")");
  }
  OnnxImportOptions o;
  o.input_shape = opts.input_shape;
  o.load_weights = opts.with_weights;
  o.fuse_batchnorm = opts.fuse_batchnorm;
  if (metadata == nullptr) return ImportOnnx(spec, o);
  onnx::ModelProto proto;
  RETURN_IF_ERROR(ReadOnnxFile(spec, &proto));
  ASSIGN_OR_RETURN(Model m, ImportOnnxModel(proto, spec, DirName(spec), o));
  *metadata = ReadMetadataProps(proto);
  return m;
}

StatusOr<ModelMetadata> LoadModelMetadata(const std::string& spec) {
  if (Zoo::Global().Find(spec) != nullptr) return ModelMetadata{};
  onnx::ModelProto proto;
  RETURN_IF_ERROR(ReadOnnxFile(spec, &proto));
  return ReadMetadataProps(proto);
}

}  // namespace shoal
