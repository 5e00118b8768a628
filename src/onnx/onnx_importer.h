// The ONNX -> shoal translation of one graph: initializers, inputs, nodes
// (folded, converted or dropped) and outputs. onnx_import.cc runs it and
// then the whole-graph checks and transforms.
#ifndef SHOAL_ONNX_ONNX_IMPORTER_H_
#define SHOAL_ONNX_ONNX_IMPORTER_H_

#include <onnx/onnx_pb.h>

#include <map>
#include <optional>
#include <set>
#include <string>

#include "graph/weights.h"
#include "onnx/const_value.h"
#include "onnx/fuse_layer_norm.h"
#include "onnx/onnx_import.h"
#include "util/status.h"

namespace shoal {

class OnnxImporter {
 public:
  OnnxImporter(const onnx::ModelProto& model, std::string base_dir,
               const OnnxImportOptions& opts)
      : model_(model), base_dir_(std::move(base_dir)), opts_(opts) {}

  // Fills `m` with a graph whose activations are shaped node by node.
  Status Run(Model* m);

  int64_t opset() const { return opset_; }
  // False when --input-shape replaced fixed dimensions: the shapes the file
  // declares then describe another input and are not checked.
  bool declared_shapes_apply() const { return declared_shapes_apply_; }
  // The tensor `name` stands for after Identity of constants.
  std::string Resolve(const std::string& name) const;

 private:
  friend class NodeEnv;
  // A tensor known at import time. Initializers are decoded only when
  // folding needs their values or when weights are loaded.
  struct Known {
    const onnx::TensorProto* proto = nullptr;
    std::optional<ConstValue> value;
    Shape shape;
  };

  Status ReadOpset();
  Status AddInitializers();
  Status AddInputs();
  // Folds `n`, aliases it, or converts it into `*out` (not yet added).
  Status ImportNode(const onnx::NodeProto& n, int index,
                    std::optional<Node>* out);
  Status FoldInto(const onnx::NodeProto& n);
  // Imports node `n` (index `i`) with its errors' context.
  Status ImportAt(const onnx::NodeProto& n, int i);
  // One LayerNormalization for the chain when its constants make it one
  // (onnx/fuse_layer_norm.h), else its nodes.
  Status ImportLayerNormChain(const LayerNormChain& c);
  Status AddOutputs();
  // The value of a known tensor (decoded on first use), or nullptr.
  StatusOr<const ConstValue*> ConstantOf(const std::string& resolved);
  std::optional<int32_t> ConstantTypeOf(const std::string& resolved);
  const Shape* ShapeOf(const std::string& resolved) const;
  // Turns a known tensor read as data into a weight.
  Status Materialize(const std::string& resolved);
  // Adds `n` to the graph and shapes its outputs at once, so later Shape
  // nodes can fold.
  Status AddShoalNode(Node n);
  std::string NodeName(const onnx::NodeProto& n, int index);

  const onnx::ModelProto& model_;
  std::string base_dir_;
  OnnxImportOptions opts_;
  Model* m_ = nullptr;
  int64_t opset_ = 0;
  bool declared_shapes_apply_ = true;
  std::map<std::string, Known> known_;
  std::map<std::string, std::string> alias_;
  std::set<std::string> read_;  // tensors some node or graph output reads
  std::set<std::string> node_names_;
};

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_IMPORTER_H_
