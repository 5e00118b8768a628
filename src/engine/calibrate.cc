#include "engine/calibrate.h"

#include <algorithm>

namespace shoal {

StatusOr<std::map<std::string, ValueRange>> CalibrateRanges(
    const Model& m, const std::vector<std::string>& tensors,
    const std::vector<Tensor>& samples, const ExecutorOptions& opts) {
  const Graph& g = m.graph;
  if (g.inputs.size() != 1) {
    return Unsupported("calibration needs a model with one input; '" + g.name +
                       "' has " + std::to_string(g.inputs.size()));
  }
  if (samples.empty()) return InvalidArgument("no calibration samples");
  const Shape& in_shape = g.FindTensor(g.inputs[0])->shape;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (samples[i].shape != in_shape) {
      return InvalidArgument("calibration sample " + std::to_string(i) +
                             " has shape " + ShapeToString(samples[i].shape) +
                             ", the model's input is " +
                             ShapeToString(in_shape));
    }
  }
  // The tensors become the graph's outputs; the input is read directly.
  Graph probe = g;
  probe.outputs.clear();
  for (const auto& t : tensors) {
    const TensorInfo* info = g.FindTensor(t);
    if (!info || info->is_weight()) {
      return InvalidArgument("'" + t + "' is not an activation of '" + g.name +
                             "'");
    }
    if (t != g.inputs[0]) probe.outputs.push_back(t);
  }
  std::map<std::string, ValueRange> ranges;
  for (const auto& t : tensors) ranges[t];
  if (std::count(tensors.begin(), tensors.end(), g.inputs[0])) {
    for (const Tensor& s : samples)
      ranges[g.inputs[0]].Add(s.data.data(), s.size());
  }
  if (probe.outputs.empty()) return ranges;
  ASSIGN_OR_RETURN(auto ex, Executor::Create(probe, m.weights, opts));
  std::vector<Tensor> out;
  for (const Tensor& s : samples) {
    RETURN_IF_ERROR(ex->Run({s}, &out));
    for (size_t k = 0; k < out.size(); ++k)
      ranges[probe.outputs[k]].Add(out[k].data.data(), out[k].size());
  }
  return ranges;
}

StatusOr<QdqSummary> QuantizeStatic(const std::vector<Tensor>& samples,
                                    Model* m, const ExecutorOptions& opts) {
  if (!m->has_weights()) {
    return FailedPrecondition("model '" + m->graph.name +
                              "' has no weights to quantize");
  }
  ASSIGN_OR_RETURN(auto ranges,
                   CalibrateRanges(*m, QdqActivations(*m), samples, opts));
  return InsertQdq(ranges, m);
}

}  // namespace shoal
