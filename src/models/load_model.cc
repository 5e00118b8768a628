#include "models/load_model.h"

#include "graph/fuse_batchnorm.h"
#include "models/zoo.h"
#include "onnx/onnx_import.h"

namespace shoal {

StatusOr<Model> LoadModel(const std::string& spec, const LoadOptions& opts) {
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
  return ImportOnnx(spec, o);
}

}  // namespace shoal
