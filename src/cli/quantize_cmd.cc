// `shoal quantize MODEL -o OUT.onnx`: post-training static quantization into
// a QDQ ONNX model (graph/insert_qdq.h), calibrated on sample inputs;
// with --evaluate, the accuracy of both models on the test images.
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/calibration_flags.h"
#include "cli/commands.h"
#include "cli/quantize_evaluate.h"
#include "engine/calibrate.h"
#include "graph/fuse_batchnorm.h"
#include "graph/op_registry.h"
#include "models/load_model.h"
#include "onnx/onnx_metadata.h"

namespace shoal {
namespace {

struct QuantizeArgs {
  std::string model;
  std::string out;
  std::string input_shape;
  uint64_t seed = 0;
  CalibrationFlags calibration;
  bool evaluate = false;
  int evaluate_samples = 10000;
  std::string backend = "onednn";
  bool json = false;
};

// Bytes of the weights as the file stores them: int8 where a
// DequantizeLinear reads them, f32 elsewhere.
int64_t StoredWeightBytes(const Model& m) {
  int64_t bytes = 0;
  for (const auto& [name, t] : m.weights) {
    bool int8 = false;
    for (int c : m.graph.ConsumerIndices(name))
      int8 |= QuantRoleOf(&m.graph.nodes[c]) == QuantRole::kDequantize;
    bytes += t.size() * (int8 ? 1 : 4);
  }
  return bytes;
}

void PrintEvaluation(const QuantizeEvaluation& e, const std::string& dir,
                     Backend backend) {
  const double f32 = 100 * e.f32_accuracy, int8 = 100 * e.int8_accuracy;
  std::cout << std::fixed << std::setprecision(2) << "accuracy on " << e.images
            << " test images of " << dir << ", by shoal's engine ("
            << BackendName(backend) << "): f32 " << f32 << " %, int8 " << int8
            << " % (" << std::showpos << int8 - f32 << std::noshowpos
            << " points); " << e.changed_class << " of " << e.images
            << " images change class\n";
}

Status RunQuantize(const QuantizeArgs& a) {
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  lo.with_weights = true;
  lo.seed = a.seed;
  lo.fuse_batchnorm = true;
  ModelMetadata metadata;  // the int8 file says what the f32 one said
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo, &metadata));
  // LoadModel fuses on ONNX import only: a zoo model's BatchNorms are folded
  // here, so that the int8 weights are the folded ones.
  RETURN_IF_ERROR(FuseBatchNorm(&m).status());
  // The test images are loaded before quantizing: a model they do not fit,
  // or a missing dataset, fails before any work.
  ImageDataset test;
  QuantizeEvaluation eval;
  ASSIGN_OR_RETURN(Backend backend, ParseBackend(a.backend));
  if (a.evaluate) {
    ASSIGN_OR_RETURN(test, LoadEvaluationImages(m, a.calibration.dataset,
                                                a.evaluate_samples));
  }
  const Model f32 = a.evaluate ? m : Model{};
  const int64_t f32_bytes = StoredWeightBytes(m);
  std::string source;
  ASSIGN_OR_RETURN(std::vector<Tensor> samples,
                   LoadCalibration(a.calibration, m.graph, &source));
  ASSIGN_OR_RETURN(QdqSummary s, QuantizeStatic(samples, &m));
  if (s.layers == 0) {
    return FailedPrecondition("model '" + m.graph.name +
                              "' has no Conv, Gemm or MatMul with a weight "
                              "to quantize");
  }
  RETURN_IF_ERROR(ExportOnnxWithMetadata(m, metadata, a.out));
  const int64_t int8_bytes = StoredWeightBytes(m);
  if (a.evaluate) {
    // The file as written, as `shoal infer` would load it.
    LoadOptions back;
    back.with_weights = true;
    ASSIGN_OR_RETURN(Model q, LoadModel(a.out, back));
    ASSIGN_OR_RETURN(eval, EvaluateQuantized(f32, q, test.test, backend));
  }
  if (a.json) {
    nlohmann::json j = {
        {"output", a.out},
        {"model", m.graph.name},
        {"layers", s.layers},
        {"activation_scales", s.activations},
        {"calibration", source},
        {"weight_bytes", {{"f32", f32_bytes}, {"int8", int8_bytes}}},
        {"file_bytes", std::filesystem::file_size(a.out)}};
    if (a.evaluate) {
      j["evaluation"] = {
          {"dataset", test.dir},
          {"backend", BackendName(backend)},
          {"images", eval.images},
          {"f32_accuracy", eval.f32_accuracy},
          {"int8_accuracy", eval.int8_accuracy},
          {"change_points", 100 * (eval.int8_accuracy - eval.f32_accuracy)},
          {"changed_class", eval.changed_class}};
    }
    std::cout << j.dump(2) << std::endl;
    return Status::Ok();
  }
  std::cout << "wrote " << a.out << ": " << s.layers
            << " layers with int8 weights (a scale per output channel), "
            << s.activations << " activation scales calibrated on " << source
            << "; weights " << std::fixed << std::setprecision(3)
            << f32_bytes / 1048576.0 << " MiB f32 -> " << int8_bytes / 1048576.0
            << " MiB\n";
  if (a.evaluate) PrintEvaluation(eval, test.dir, backend);
  return Status::Ok();
}

}  // namespace

void AddQuantizeCommand(CLI::App* app) {
  auto a = std::make_shared<QuantizeArgs>();
  auto* cmd = app->add_subcommand(
      "quantize",
      "Post-training static int8 quantization: writes a QDQ ONNX model "
      "(int8 weights per output channel, calibrated activation scales)");
  cmd->add_option("model", a->model, "Zoo name or path to an .onnx file")
      ->required();
  cmd->add_option("-o,--output", a->out, "Output .onnx path")->required();
  cmd->add_option("--input-shape", a->input_shape,
                  "Input shape, e.g. 1,3,224,224");
  cmd->add_option("--weights-seed", a->seed,
                  "Seed of zoo models' random weights");
  AddCalibrationFlags(cmd, &a->calibration);
  auto* evaluate =
      cmd->add_flag("--evaluate", a->evaluate,
                    "For a model of 1x1x28x28 inputs: the f32 and the int8 "
                    "model's accuracy on the test images of "
                    "--calibration-dataset, run by shoal's engine");
  cmd->add_option("--evaluate-samples", a->evaluate_samples,
                  "Test images to evaluate on (default all 10 000)")
      ->check(CLI::Range(1, 1 << 20))
      ->needs(evaluate);
  cmd->add_option("--backend", a->backend,
                  "Backend that --evaluate runs both models on: onednn "
                  "(default) or reference")
      ->needs(evaluate);
  cmd->add_flag("--json", a->json, "Print one JSON object");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunQuantize(*a))); });
}

}  // namespace shoal
