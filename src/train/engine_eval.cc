#include "train/engine_eval.h"

#include <algorithm>
#include <cmath>

#include "engine/executor.h"

namespace shoal {
namespace {

int64_t ArgMax(const float* v, int64_t n) {
  return std::max_element(v, v + n) - v;
}

}  // namespace

StatusOr<EngineEval> EvaluateWithEngine(const Model& m, const ImageSet& images,
                                        Backend backend) {
  const Graph& g = m.graph;
  if (g.inputs.size() != 1 || g.outputs.size() != 1)
    return InvalidArgument("model '" + g.name +
                           "' needs one input and one output");
  const Shape in = g.FindTensor(g.inputs[0])->shape;
  const Shape out = g.FindTensor(g.outputs[0])->shape;
  if (in != Shape{1, 1, images.rows, images.cols} || out.size() != 2)
    return InvalidArgument("model '" + g.name + "' takes " + ShapeToString(in) +
                           " and gives " + ShapeToString(out) +
                           ", not a classifier of 1x1x" +
                           std::to_string(images.rows) + "x" +
                           std::to_string(images.cols) + " images");
  // One thread: a LeNet image is microseconds of work, less than waking a
  // second thread costs.
  ExecutorOptions eo;
  eo.threads = 1;
  eo.backend = backend;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(g, m.weights, eo));
  EngineEval r;
  r.classes = out[1];
  r.scores.resize(images.count * r.classes);
  std::vector<Tensor> x(1, Tensor(in)), y;
  const int64_t pixels = images.rows * images.cols;
  int64_t correct = 0;
  for (int64_t i = 0; i < images.count; ++i) {
    const uint8_t* p = images.pixels.data() + i * pixels;
    for (int64_t k = 0; k < pixels; ++k) x[0].data[k] = p[k] / 255.0f;
    RETURN_IF_ERROR(ex->Run(x, &y));
    float* s = r.scores.data() + i * r.classes;
    std::copy(y[0].data.begin(), y[0].data.end(), s);
    correct += ArgMax(s, r.classes) == images.labels[i];
  }
  r.accuracy = static_cast<double>(correct) / images.count;
  return r;
}

ScoreComparison CompareScores(const std::vector<float>& trainer,
                              const std::vector<float>& engine,
                              int64_t classes) {
  ScoreComparison c;
  const int64_t n = std::min(trainer.size(), engine.size()) / classes;
  for (size_t i = 0; i < trainer.size() && i < engine.size(); ++i) {
    c.max_abs_diff =
        std::max(c.max_abs_diff, double{std::fabs(trainer[i] - engine[i])});
    c.max_abs_score = std::max(c.max_abs_score, double{std::fabs(trainer[i])});
  }
  for (int64_t i = 0; i < n; ++i) {
    const float* t = trainer.data() + i * classes;
    const float* e = engine.data() + i * classes;
    const int64_t a = ArgMax(t, classes), b = ArgMax(e, classes);
    if (a == b) continue;
    c.disagreements++;
    // A tie within 1e-4 of the scores' scale may fall either way.
    if (t[a] - t[b] > 1e-4 * std::max(1.0, c.max_abs_score))
      c.real_disagreements++;
  }
  return c;
}

}  // namespace shoal
