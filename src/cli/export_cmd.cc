// `shoal export MODEL -o OUT.onnx`: writes a zoo model (with seeded
// weights) or a re-read ONNX model as opset-13 ONNX.
#include <iomanip>
#include <iostream>

#include "cli/commands.h"
#include "graph/cost.h"
#include "graph/fuse_batchnorm.h"
#include "models/load_model.h"
#include "onnx/onnx_export.h"

namespace shoal {
namespace {

struct ExportArgs {
  std::string model;
  std::string out;
  std::string input_shape;
  bool no_weights = false;
  bool fuse_batchnorm = false;
  uint64_t seed = 0;
};

Status RunExport(const ExportArgs& a) {
  LoadOptions lo;
  ASSIGN_OR_RETURN(lo.input_shape, ParseInputShapeFlag(a.input_shape));
  lo.with_weights = !a.no_weights;
  lo.seed = a.seed;
  lo.fuse_batchnorm = a.fuse_batchnorm;
  ASSIGN_OR_RETURN(Model m, LoadModel(a.model, lo));
  // LoadModel fuses on ONNX import only; zoo graphs are fused here.
  if (a.fuse_batchnorm) RETURN_IF_ERROR(FuseBatchNorm(&m).status());
  RETURN_IF_ERROR(ExportOnnx(m, a.out));
  ASSIGN_OR_RETURN(GraphCost cost, ComputeGraphCost(m.graph));
  std::cout << "wrote " << a.out << ": model " << m.graph.name << ", "
            << m.graph.nodes.size() << " nodes, " << std::fixed
            << std::setprecision(2) << cost.weight_elements / 1e6
            << " M weights, " << std::setprecision(1)
            << cost.weight_elements * 4.0 / (1 << 20) << " MiB ("
            << (m.has_weights() ? "with data" : "zeros, --no-weights") << ")\n";
  return Status::Ok();
}

}  // namespace

void AddExportCommand(CLI::App* app) {
  auto a = std::make_shared<ExportArgs>();
  auto* cmd =
      app->add_subcommand("export", "Write a model as an ONNX file (opset 13)");
  cmd->add_option("model", a->model, "Zoo name or path to an .onnx file")
      ->required();
  cmd->add_option("-o,--output", a->out, "Output .onnx path")->required();
  cmd->add_option("--input-shape", a->input_shape,
                  "Input shape, e.g. 1,3,224,224");
  cmd->add_flag("--no-weights", a->no_weights,
                "Structure only: initializers hold zeros");
  cmd->add_flag("--fuse-batchnorm", a->fuse_batchnorm,
                "Fold BatchNormalization into the preceding Conv");
  cmd->add_option("--weights-seed", a->seed,
                  "Seed of zoo models' random weights");
  cmd->callback([a] { throw CommandExit(ReportStatus(RunExport(*a))); });
}

}  // namespace shoal
