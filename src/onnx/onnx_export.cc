#include "onnx/onnx_export.h"

#include <onnx/onnx_pb.h>

#include <set>

#include "graph/verify.h"
#include "onnx/export_node.h"
#include "onnx/onnx_file.h"
#include "onnx/onnx_tensor.h"

namespace shoal {
namespace {

// ir_version 7 is what Debian's onnx 1.12 checker accepts with opset 13.
constexpr int64_t kIrVersion = 7;
constexpr int64_t kOpset = 13;

void SetValueInfo(const std::string& name, const Shape& shape,
                  onnx::ValueInfoProto* vi) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

// Weights as initializers, in order of first use.
Status AddInitializers(const Model& model, onnx::GraphProto* graph) {
  const Graph& g = model.graph;
  std::set<std::string> done;
  for (const auto& n : g.nodes) {
    for (const auto& in : n.inputs) {
      const TensorInfo* t = in.empty() ? nullptr : g.FindTensor(in);
      if (!t || !t->is_weight() || !done.insert(in).second) continue;
      const float* data = nullptr;
      if (model.has_weights()) data = model.weights.at(in).data.data();
      EncodeFloatTensor(in, t->shape, data, graph->add_initializer());
    }
  }
  return Status::Ok();
}

}  // namespace

Status ModelToOnnx(const Model& model, onnx::ModelProto* out) {
  const Graph& g = model.graph;
  RETURN_IF_ERROR(VerifyGraph(g));
  if (model.has_weights()) RETURN_IF_ERROR(CheckWeights(g, model.weights));
  out->Clear();
  out->set_ir_version(kIrVersion);
  out->set_producer_name("shoal");
  int64_t opset = kOpset;
  for (const auto& n : g.nodes)
    if (n.op == "HardSwish") opset = 14;  // HardSwish is new in opset 14
  auto* op = out->add_opset_import();
  op->set_domain("");
  op->set_version(opset);

  onnx::GraphProto* graph = out->mutable_graph();
  graph->set_name(g.name);
  std::set<std::string> taken;
  for (const auto& [name, t] : g.tensors) taken.insert(name);
  for (const auto& in : g.inputs)
    SetValueInfo(in, g.FindTensor(in)->shape, graph->add_input());
  RETURN_IF_ERROR(AddInitializers(model, graph));
  std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  for (const auto& n : g.nodes) {
    RETURN_IF_ERROR(ExportNode(n, graph, &taken));
    for (const auto& o : n.outputs) {
      if (o.empty() || outputs.count(o)) continue;
      SetValueInfo(o, g.FindTensor(o)->shape, graph->add_value_info());
    }
  }
  for (const auto& o : g.outputs)
    SetValueInfo(o, g.FindTensor(o)->shape, graph->add_output());
  return Status::Ok();
}

Status ExportOnnx(const Model& model, const std::string& path) {
  onnx::ModelProto proto;
  RETURN_IF_ERROR(ModelToOnnx(model, &proto));
  return WriteOnnxFile(proto, path);
}

}  // namespace shoal
