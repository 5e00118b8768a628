// One entry point for "MODEL" on the command line: a zoo name or an .onnx path.
#ifndef SHOAL_MODELS_LOAD_MODEL_H_
#define SHOAL_MODELS_LOAD_MODEL_H_

#include <optional>
#include <string>

#include "graph/model_metadata.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct LoadOptions {
  std::optional<Shape> input_shape;  // overrides the model's default
  bool with_weights = false;         // zoo: seeded weights; onnx: initializers
  uint64_t seed = 0;                 // zoo weight seed
  bool fuse_batchnorm = false;
};

StatusOr<Model> LoadModel(const std::string& spec, const LoadOptions& opts);

// The same, and what the file says about the model (an ONNX file's
// metadata_props; a zoo model says nothing: empty).
StatusOr<Model> LoadModel(const std::string& spec, const LoadOptions& opts,
                          ModelMetadata* metadata);

// The metadata alone, for a caller that loaded the model otherwise
// (LoadPlanModel); empty for a zoo name.
StatusOr<ModelMetadata> LoadModelMetadata(const std::string& spec);

}  // namespace shoal

#endif  // SHOAL_MODELS_LOAD_MODEL_H_
