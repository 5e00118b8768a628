// `shoal quantize MODEL -o OUT.onnx`: post-training static quantization into
// a QDQ ONNX model (graph/insert_qdq.h), calibrated on sample inputs.
#include <iomanip>
#include <iostream>

#include "cli/calibration_flags.h"
#include "cli/commands.h"
#include "engine/calibrate.h"
#include "graph/fuse_batchnorm.h"
#include "models/load_model.h"
#include "onnx/onnx_export.h"

namespace shoal {
namespace {

struct QuantizeArgs {
  std::string model;
  std::string out;
  std::string input_shape;
  uint64_t seed = 0;
  CalibrationFlags calibration;
};

// Bytes of the weights as the file stores them: int8 where a
// DequantizeLinear reads them, f32 elsewhere.
int64_t StoredWeightBytes(const Model& m) {
  int64_t bytes = 0;
  for (const auto& [name, t] : m.weights) {
    bool int8 = false;
    for (int c : m.graph.ConsumerIndices(name))
      int8 |= m.graph.nodes[c].op == "DequantizeLinear";
    bytes += t.size() * (int8 ? 1 : 4);
  }
  return bytes;
}

Status RunQuantize(const QuantizeArgs& a) {
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  lo.with_weights = true;
  lo.seed = a.seed;
  lo.fuse_batchnorm = true;
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  // LoadModel fuses on ONNX import only: a zoo model's BatchNorms are folded
  // here, so that the int8 weights are the folded ones.
  RETURN_IF_ERROR(FuseBatchNorm(&m).status());
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
  RETURN_IF_ERROR(ExportOnnx(m, a.out));
  std::cout << "wrote " << a.out << ": " << s.layers
            << " layers with int8 weights (a scale per output channel), "
            << s.activations << " activation scales calibrated on " << source
            << "; weights " << std::fixed << std::setprecision(3)
            << f32_bytes / 1048576.0 << " MiB f32 -> "
            << StoredWeightBytes(m) / 1048576.0 << " MiB\n";
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
  cmd->callback([a] { throw CommandExit(ReportStatus(RunQuantize(*a))); });
}

}  // namespace shoal
