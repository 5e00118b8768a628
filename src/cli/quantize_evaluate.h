// `shoal quantize --evaluate`: the f32 model and the int8 model it became,
// both run by shoal's engine on the same test images, so that the cost of
// quantizing is read as points of accuracy and images that change class.
#ifndef SHOAL_CLI_QUANTIZE_EVALUATE_H_
#define SHOAL_CLI_QUANTIZE_EVALUATE_H_

#include <cstdint>
#include <string>

#include "engine/executor.h"
#include "graph/weights.h"
#include "train/fashion_mnist.h"
#include "util/status.h"

namespace shoal {

// The first `limit` test images of `dataset` (as --calibration-dataset
// names it) for a model of 1x1x28x28 inputs. Called before quantizing, so
// that a model of other inputs or a missing dataset fails at once, named.
StatusOr<ImageDataset> LoadEvaluationImages(const Model& m,
                                            const std::string& dataset,
                                            int64_t limit);

struct QuantizeEvaluation {
  int64_t images = 0;
  double f32_accuracy = 0, int8_accuracy = 0;  // in [0, 1]
  int64_t changed_class = 0;  // images whose predicted class differs
};

// Both models on `backend`, one image at a time on one thread, as
// EvaluateWithEngine runs a trained model.
StatusOr<QuantizeEvaluation> EvaluateQuantized(const Model& f32,
                                               const Model& int8,
                                               const ImageSet& test,
                                               Backend backend);

}  // namespace shoal

#endif  // SHOAL_CLI_QUANTIZE_EVALUATE_H_
