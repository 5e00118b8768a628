#include "cli/lcp_training.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "io/image_metadata.h"
#include "models/load_model.h"
#include "onnx/onnx_metadata.h"
#include "util/units.h"

namespace shoal {

std::string Pct(double v) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << 100 * v << "%";
  return o.str();
}

// One line per epoch; on a terminal, a bar redrawn in place as batches go,
// with the time left in the whole run.
void ShowTrainProgress(const TrainProgress& p, bool tty) {
  std::ostringstream line;
  line << "epoch " << p.epoch << "/" << p.epochs << " ";
  if (tty || p.epoch_done) {
    const int width = 30;
    const int bar =
        static_cast<int>(width * p.batch / std::max<int64_t>(1, p.batches));
    line << "[" << std::string(bar, '=') << std::string(width - bar, ' ')
         << "] " << p.batch << "/" << p.batches;
  }
  line << std::fixed << std::setprecision(4) << " loss " << p.loss << " acc "
       << Pct(p.accuracy) << " lr " << std::setprecision(5) << p.lr;
  if (p.epoch_done) {
    line << " test " << Pct(p.test_accuracy) << " " << std::setprecision(1)
         << p.seconds << "s";
  } else if (const double left = TrainSecondsLeft(p); left >= 0) {
    line << ", " << HumanMs(left * 1e3) << " left";
  }
  if (tty) {
    // Redraw at most every 20 batches, and the final line of each epoch.
    if (!p.epoch_done && p.batch % 20 != 0) return;
    std::cerr << "\r" << line.str() << "\033[K" << (p.epoch_done ? "\n" : "")
              << std::flush;
  } else if (p.epoch_done) {
    std::cerr << line.str() << "\n";
  }
}

double TrainSecondsLeft(const TrainProgress& p) {
  if (p.batch <= 0 || p.batches <= 0) return -1;
  const double per_batch = p.seconds / p.batch;
  const int64_t batches_left =
      (p.batches - p.batch) + int64_t{p.epochs - p.epoch} * p.batches;
  return per_batch * static_cast<double>(batches_left);
}

ModelMetadata TrainedModelMetadata(const ImageDataset& data) {
  ModelMetadata m;
  ImageNormalization n;
  n.mean = {0.f};
  n.std = {1.f};
  SetImageNormalization(n, &m);
  if (data.dir == kDebianFashionMnistDir)
    SetClassNames(FashionMnistClassNames(), &m);
  return m;
}

StatusOr<TrainedModel> TrainAndCheck(const Graph& g, const ImageDataset& data,
                                     const TrainOptions& o,
                                     const std::string& out,
                                     const ModelMetadata& metadata) {
  TrainedModel t;
  ASSIGN_OR_RETURN(t.cost, ComputeGraphCost(g));
  t.used = o.limit > 0 ? std::min(o.limit, data.train.count) : data.train.count;
  std::cerr << "training " << g.name << " (" << HumanCount(t.cost.params)
            << " params, " << HumanCount(t.cost.macs) << " MACs) on " << t.used
            << " images of " << data.dir << ", testing on " << data.test.count
            << "\n";
  ASSIGN_OR_RETURN(t.r, TrainGraph(g, data, o));
  RETURN_IF_ERROR(ExportOnnxWithMetadata(Model{g, t.r.weights}, metadata, out));
  // The engine runs the file as written, as `shoal infer` would.
  LoadOptions reload;
  reload.with_weights = true;
  ASSIGN_OR_RETURN(Model written, LoadModel(out, reload));
  const auto t0 = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(t.e, EvaluateWithEngine(written, data.test));
  t.engine_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  t.c = CompareScores(t.r.test_scores, t.e.scores, t.e.classes);
  if (t.c.real_disagreements > 0)
    return Internal("the engine running '" + out +
                    "' disagrees with the "
                    "trainer on " +
                    std::to_string(t.c.real_disagreements) +
                    " test images (largest score difference " +
                    std::to_string(t.c.max_abs_diff) + "): accuracy " +
                    Pct(t.e.accuracy) + " against the trainer's " +
                    Pct(t.r.test_accuracy));
  return t;
}

}  // namespace shoal
