// Calibration for static quantization: runs a model on sample inputs and
// records the range each named tensor takes.
#ifndef SHOAL_ENGINE_CALIBRATE_H_
#define SHOAL_ENGINE_CALIBRATE_H_

#include <map>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "graph/insert_qdq.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// The range of each of `tensors` (activations or graph inputs of `m`) over
// `samples`, each a value for the model's single input.
StatusOr<std::map<std::string, ValueRange>> CalibrateRanges(
    const Model& m, const std::vector<std::string>& tensors,
    const std::vector<Tensor>& samples, const ExecutorOptions& opts = {});

// Calibrates `m` on `samples` and rewrites it into QDQ form (InsertQdq).
StatusOr<QdqSummary> QuantizeStatic(const std::vector<Tensor>& samples,
                                    Model* m, const ExecutorOptions& opts = {});

}  // namespace shoal

#endif  // SHOAL_ENGINE_CALIBRATE_H_
