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

// What QuantizeLinear writes is int8 in ONNX (f32 integers in shoal).
bool IsInt8(const Graph& g, const std::string& tensor) {
  const int p = g.ProducerIndex(tensor);
  return p >= 0 && g.nodes[p].op == "QuantizeLinear";
}

void SetValueInfo(const Graph& g, const std::string& name, const Shape& shape,
                  onnx::ValueInfoProto* vi) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(IsInt8(g, name) ? onnx::TensorProto::INT8
                                    : onnx::TensorProto::FLOAT);
  auto* s = tt->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

// ONNX's Where takes a BOOL condition; shoal's is f32 (nonzero is true).
void EncodeBoolTensor(const std::string& name, const Shape& shape,
                      const float* data, onnx::TensorProto* t) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::BOOL);
  for (int64_t d : shape) t->add_dims(d);
  std::string bytes(NumElements(shape), '\0');
  for (size_t i = 0; data && i < bytes.size(); ++i) bytes[i] = data[i] != 0.f;
  t->set_raw_data(bytes);
}

// Weights as initializers, in order of first use; what DequantizeLinear
// reads as int8, a quarter of the bytes.
Status AddInitializers(const Model& model, onnx::GraphProto* graph) {
  const Graph& g = model.graph;
  std::set<std::string> conditions;
  for (const auto& n : g.nodes) {
    if (n.op != "Where") continue;
    const TensorInfo* c = g.FindTensor(n.inputs[0]);
    if (!c->is_weight()) {
      return Unsupported("node '" + n.name +
                         "' (Where): a condition computed at run time has "
                         "no ONNX form in shoal's f32 graphs");
    }
    conditions.insert(n.inputs[0]);
  }
  std::set<std::string> done;
  for (const auto& n : g.nodes) {
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const std::string& in = n.inputs[i];
      const TensorInfo* t = in.empty() ? nullptr : g.FindTensor(in);
      if (!t || !t->is_weight() || !done.insert(in).second) continue;
      const float* data = nullptr;
      if (model.has_weights()) data = model.weights.at(in).data.data();
      const bool quantized = n.op == "DequantizeLinear" && i == 0;
      for (int c : g.ConsumerIndices(in)) {
        const Node& reader = g.nodes[c];
        for (size_t k = 0; k < reader.inputs.size(); ++k) {
          if (reader.inputs[k] != in) continue;
          if ((reader.op == "DequantizeLinear" && k == 0) != quantized) {
            return Unsupported("weight '" + in +
                               "' is read both as int8 (by a "
                               "DequantizeLinear) and as f32");
          }
        }
      }
      if (quantized) {
        RETURN_IF_ERROR(
            EncodeInt8Tensor(in, t->shape, data, graph->add_initializer())
                .WithContext("node '" + n.name + "'"));
      } else if (conditions.count(in)) {
        if (n.op != "Where" || i != 0) {
          return Unsupported("weight '" + in +
                             "' is both a Where condition and a number");
        }
        EncodeBoolTensor(in, t->shape, data, graph->add_initializer());
      } else {
        EncodeFloatTensor(in, t->shape, data, graph->add_initializer());
      }
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
    if (n.op == "HardSwish") opset = std::max<int64_t>(opset, 14);
  for (const auto& n : g.nodes)  // LayerNormalization is new in opset 17
    if (n.op == "LayerNormalization") opset = 17;
  auto* op = out->add_opset_import();
  op->set_domain("");
  op->set_version(opset);

  onnx::GraphProto* graph = out->mutable_graph();
  graph->set_name(g.name);
  std::set<std::string> taken;
  for (const auto& [name, t] : g.tensors) taken.insert(name);
  for (const auto& in : g.inputs)
    SetValueInfo(g, in, g.FindTensor(in)->shape, graph->add_input());
  RETURN_IF_ERROR(AddInitializers(model, graph));
  std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  for (const auto& n : g.nodes) {
    RETURN_IF_ERROR(ExportNode(n, graph, &taken));
    for (const auto& o : n.outputs) {
      if (o.empty() || outputs.count(o)) continue;
      SetValueInfo(g, o, g.FindTensor(o)->shape, graph->add_value_info());
    }
  }
  for (const auto& o : g.outputs)
    SetValueInfo(g, o, g.FindTensor(o)->shape, graph->add_output());
  return Status::Ok();
}

Status ExportOnnx(const Model& model, const std::string& path) {
  onnx::ModelProto proto;
  RETURN_IF_ERROR(ModelToOnnx(model, &proto));
  return WriteOnnxFile(proto, path);
}

}  // namespace shoal
