#include "cli/quantize_evaluate.h"

#include <algorithm>

#include "train/engine_eval.h"

namespace shoal {

StatusOr<ImageDataset> LoadEvaluationImages(const Model& m,
                                            const std::string& dataset,
                                            int64_t limit) {
  const Graph& g = m.graph;
  const Shape in =
      g.inputs.size() == 1 ? g.FindTensor(g.inputs[0])->shape : Shape{};
  if (in != Shape{1, 1, 28, 28}) {
    return InvalidArgument(
        "--evaluate runs the Fashion-MNIST test images, which needs a model "
        "of one 1x1x28x28 input; '" +
        g.name + "' takes " +
        (g.inputs.size() == 1 ? ShapeToString(in)
                              : std::to_string(g.inputs.size()) + " inputs"));
  }
  ASSIGN_OR_RETURN(ImageDataset d, LoadFashionMnist(dataset));
  d.train = {};  // calibration loads its own
  ImageSet& t = d.test;
  if (limit < t.count) {
    t.count = limit;
    t.pixels.resize(limit * t.rows * t.cols);
    t.labels.resize(limit);
  }
  return d;
}

namespace {

// EvaluateWithEngine's loop on a chosen backend: the reference one is the
// oracle for an int8 graph oneDNN cannot build.
StatusOr<EngineEval> Score(const Model& m, const ImageSet& images,
                           Backend backend) {
  const Graph& g = m.graph;
  const Shape out =
      g.outputs.size() == 1 ? g.FindTensor(g.outputs[0])->shape : Shape{};
  if (out.size() != 2)
    return InvalidArgument(
        "--evaluate needs a classifier, one output of "
        "class scores; model '" +
        g.name + "' gives " +
        (g.outputs.size() == 1
             ? ShapeToString(out)
             : std::to_string(g.outputs.size()) + " outputs"));
  ExecutorOptions eo;
  eo.threads = 1;  // a LeNet image is less work than waking a thread
  eo.backend = backend;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(g, m.weights, eo));
  EngineEval r;
  r.classes = out[1];
  r.scores.resize(images.count * r.classes);
  std::vector<Tensor> x(1, Tensor(g.FindTensor(g.inputs[0])->shape)), y;
  const int64_t pixels = images.rows * images.cols;
  int64_t correct = 0;
  for (int64_t i = 0; i < images.count; ++i) {
    const uint8_t* p = images.pixels.data() + i * pixels;
    for (int64_t k = 0; k < pixels; ++k) x[0].data[k] = p[k] / 255.0f;
    RETURN_IF_ERROR(ex->Run(x, &y));
    float* s = r.scores.data() + i * r.classes;
    std::copy(y[0].data.begin(), y[0].data.end(), s);
    correct += std::max_element(s, s + r.classes) - s == images.labels[i];
  }
  r.accuracy = static_cast<double>(correct) / images.count;
  return r;
}

}  // namespace

StatusOr<QuantizeEvaluation> EvaluateQuantized(const Model& f32,
                                               const Model& int8,
                                               const ImageSet& test,
                                               Backend backend) {
  ASSIGN_OR_RETURN(EngineEval a, Score(f32, test, backend));
  auto b_or = Score(int8, test, backend);
  if (!b_or.ok()) {
    return b_or.status().WithContext(
        std::string("running the int8 model on the ") + BackendName(backend) +
        " backend" +
        (backend == Backend::kOneDnn ? " (--backend reference runs it on the "
                                       "reference kernels)"
                                     : ""));
  }
  const EngineEval& b = *b_or;
  QuantizeEvaluation e;
  e.images = test.count;
  e.f32_accuracy = a.accuracy;
  e.int8_accuracy = b.accuracy;
  e.changed_class = CompareScores(a.scores, b.scores, a.classes).disagreements;
  return e;
}

}  // namespace shoal
