// What a model file says about itself beside its graph: ONNX's
// metadata_props, key to value. shoal reads the keys below (docs/models.md,
// "What an ONNX file may say about its input and classes"): the names of a
// classifier's classes and how 8-bit pixels become its input.
#ifndef SHOAL_GRAPH_MODEL_METADATA_H_
#define SHOAL_GRAPH_MODEL_METADATA_H_

#include <map>
#include <string>

namespace shoal {

using ModelMetadata = std::map<std::string, std::string>;

// A JSON array of strings: the name of output class i at index i.
inline constexpr char kClassNamesKey[] = "shoal.class_names";
// Per-channel mean and std, comma-separated, of pixel values scaled to
// [0, 1]: input = (pixel / 255 - mean) / std, as `infer --mean --std`.
inline constexpr char kImageMeanKey[] = "shoal.image_mean";
inline constexpr char kImageStdKey[] = "shoal.image_std";

}  // namespace shoal

#endif  // SHOAL_GRAPH_MODEL_METADATA_H_
