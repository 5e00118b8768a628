// The calibration flags of the commands that quantize a model (quantize;
// --dtype int8 on infer, plan and run): where the samples come from.
#ifndef SHOAL_CLI_CALIBRATION_FLAGS_H_
#define SHOAL_CLI_CALIBRATION_FLAGS_H_

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "graph/insert_qdq.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct CalibrationFlags {
  std::vector<std::string> files;  // .npy
  int samples = 300;
  std::string dataset = "fashion-mnist";
};

void AddCalibrationFlags(CLI::App* cmd, CalibrationFlags* f);

// Up to `samples` inputs for `g`'s single input: from the .npy files (each
// one input, or a stack of them along a leading axis), else, for a model of
// 1x1x28x28 images, the first training images of the Fashion-MNIST dataset
// scaled to [0, 1] as the trainer scales them. `*source` says which.
StatusOr<std::vector<Tensor>> LoadCalibration(const CalibrationFlags& f,
                                              const Graph& g,
                                              std::string* source);

// `--dtype f32|int8` and, for int8, the calibration flags.
struct DtypeFlags {
  std::string dtype = "f32";
  CalibrationFlags calibration;
  bool int8() const { return dtype == "int8"; }
};

void AddDtypeFlags(CLI::App* cmd, DtypeFlags* f);

struct QuantizedSummary {
  QdqSummary qdq;
  std::string source;        // where the calibration samples came from
  std::string Text() const;  // "5 layers with int8 weights, ... on SOURCE"
};

// Post-training static quantization of `m` (with weights) in place: its
// BatchNorms folded first, so that the int8 weights are the folded ones,
// then calibrated on `f`'s samples (LoadCalibration) and rewritten into
// QDQ form. A model with no Conv, Gemm or MatMul weight is an error naming
// it.
StatusOr<QuantizedSummary> QuantizeModel(const CalibrationFlags& f, Model* m);

}  // namespace shoal

#endif  // SHOAL_CLI_CALIBRATION_FLAGS_H_
