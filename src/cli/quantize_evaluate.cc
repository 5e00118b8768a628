#include "cli/quantize_evaluate.h"

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

StatusOr<QuantizeEvaluation> EvaluateQuantized(const Model& f32,
                                               const Model& int8,
                                               const ImageSet& test,
                                               Backend backend) {
  ASSIGN_OR_RETURN(EngineEval a, EvaluateWithEngine(f32, test, backend));
  auto b_or = EvaluateWithEngine(int8, test, backend);
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
