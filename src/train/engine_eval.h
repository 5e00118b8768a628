// Runs shoal's engine (the Executor, as `shoal infer` does) over a set of
// images and compares its class scores with the trainer's.
#ifndef SHOAL_TRAIN_ENGINE_EVAL_H_
#define SHOAL_TRAIN_ENGINE_EVAL_H_

#include <vector>

#include "engine/executor.h"
#include "graph/weights.h"
#include "train/fashion_mnist.h"
#include "util/status.h"

namespace shoal {

struct EngineEval {
  double accuracy = 0;
  std::vector<float> scores;  // count x classes
  int64_t classes = 0;
};

// One image at a time (the model's batch-1 input), pixels scaled to [0, 1]
// as in training, on `backend` (the reference one is the oracle).
StatusOr<EngineEval> EvaluateWithEngine(const Model& m, const ImageSet& images,
                                        Backend backend = Backend::kOneDnn);

struct ScoreComparison {
  int64_t disagreements = 0;  // images whose predicted class differs
  // Of those, the ones where the trainer's best two scores are not within
  // rounding of each other (a real difference, not a tie).
  int64_t real_disagreements = 0;
  double max_abs_diff = 0;  // over every score
  double max_abs_score = 0;
};

ScoreComparison CompareScores(const std::vector<float>& trainer,
                              const std::vector<float>& engine,
                              int64_t classes);

}  // namespace shoal

#endif  // SHOAL_TRAIN_ENGINE_EVAL_H_
