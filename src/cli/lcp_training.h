// What `shoal lcp train` and `shoal lcp prune` share: training a model
// with a progress line, writing it as ONNX, and scoring the file with the
// engine as `shoal infer` would.
#ifndef SHOAL_CLI_LCP_TRAINING_H_
#define SHOAL_CLI_LCP_TRAINING_H_

#include <string>

#include "graph/cost.h"
#include "graph/model_metadata.h"
#include "train/engine_eval.h"
#include "train/fashion_mnist.h"
#include "train/trainer.h"

namespace shoal {

// "83.27%": an accuracy, 0..1, as a percentage.
std::string Pct(double v);

// One line per epoch on stderr; on a terminal, a bar redrawn in place as
// batches go, with the time left in the whole run.
void ShowTrainProgress(const TrainProgress& p, bool tty);

// The time left in the whole training run, in seconds, at the pace of the
// current epoch so far; negative before its first batch.
double TrainSecondsLeft(const TrainProgress& p);

// One model trained, written as ONNX and scored by the engine.
struct TrainedModel {
  GraphCost cost;
  TrainResult r;
  EngineEval e;
  ScoreComparison c;
  double engine_s = 0;
  int64_t used = 0;  // training images
};

// What a model trained on `data` says about itself in its file: its input
// is the pixels scaled to [0, 1] (mean 0, std 1: as the trainer feeds
// them), and, trained on Debian's Fashion-MNIST, its ten class names.
ModelMetadata TrainedModelMetadata(const ImageDataset& data);

// Trains `g` with `o`, writes it to `out` with `metadata`, and scores the
// file with the engine; an engine that disagrees with the trainer is an
// error.
StatusOr<TrainedModel> TrainAndCheck(const Graph& g, const ImageDataset& data,
                                     const TrainOptions& o,
                                     const std::string& out,
                                     const ModelMetadata& metadata = {});

}  // namespace shoal

#endif  // SHOAL_CLI_LCP_TRAINING_H_
