// The import pipeline: translate the graph node by node, check it as a
// whole, then simplify it (Identity/Dropout removal, MatMul by a weight as
// Gemm, x * HardSigmoid(x) as HardSwish, optional BN fusion).
#include "onnx/onnx_import.h"

#include "graph/fuse_batchnorm.h"
#include "graph/fuse_hardswish.h"
#include "graph/matmul_to_gemm.h"
#include "graph/shape_inference.h"
#include "graph/verify.h"
#include "onnx/check_declared_shapes.h"
#include "onnx/drop_identity.h"
#include "onnx/onnx_file.h"
#include "onnx/onnx_importer.h"

namespace shoal {
namespace {

Status Import(const onnx::ModelProto& proto, const std::string& base_dir,
              const OnnxImportOptions& opts, Model* m) {
  OnnxImporter importer(proto, base_dir, opts);
  RETURN_IF_ERROR(importer.Run(m));
  Graph& g = m->graph;
  RETURN_IF_ERROR(InferShapes(&g));
  RETURN_IF_ERROR(VerifyGraph(g));
  if (importer.declared_shapes_apply()) {
    RETURN_IF_ERROR(CheckDeclaredShapes(
        proto.graph(), g,
        [&importer](const std::string& n) { return importer.Resolve(n); }));
  }
  DropIdentityOps(&g);
  MatMulToGemm(&g);
  FuseHardSwish(&g);
  if (opts.fuse_batchnorm) RETURN_IF_ERROR(FuseBatchNorm(m).status());
  RETURN_IF_ERROR(InferShapes(&g));
  RETURN_IF_ERROR(VerifyGraph(g));
  if (opts.load_weights) RETURN_IF_ERROR(CheckWeights(g, m->weights));
  return Status::Ok();
}

}  // namespace

StatusOr<Model> ImportOnnxModel(const onnx::ModelProto& model,
                                const std::string& source,
                                const std::string& base_dir,
                                const OnnxImportOptions& opts) {
  Model m;
  Status s = Import(model, base_dir, opts, &m);
  if (!s.ok()) return s.WithContext(source);
  if (model.graph().name().empty()) {
    // Unnamed graphs take the file's stem ("models/net.onnx" -> "net").
    std::string stem = source.substr(source.find_last_of('/') + 1);
    m.graph.name = stem.substr(0, stem.rfind(".onnx"));
  }
  return m;
}

StatusOr<Model> ImportOnnx(const std::string& path,
                           const OnnxImportOptions& opts) {
  onnx::ModelProto proto;
  RETURN_IF_ERROR(ReadOnnxFile(path, &proto));
  return ImportOnnxModel(proto, path, DirName(path), opts);
}

}  // namespace shoal
