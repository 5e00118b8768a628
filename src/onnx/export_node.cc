#include "onnx/export_node.h"

#include <map>
#include <vector>

#include "onnx/onnx_attrs.h"
#include "onnx/onnx_tensor.h"

namespace shoal {
namespace {

// A shoal attribute that opset 13 takes as input `index`.
struct AttrInput {
  const char* attr;
  int index;
  bool scalar_float;  // else a 1-D int64 tensor
};

const std::map<std::string, std::vector<AttrInput>>& AttrInputs() {
  static const auto* table = new std::map<std::string, std::vector<AttrInput>>{
      {"Reshape", {{"shape", 1, false}}},
      {"Slice",
       {{"starts", 1, false},
        {"ends", 2, false},
        {"axes", 3, false},
        {"steps", 4, false}}},
      {"Pad", {{"pads", 1, false}, {"value", 2, true}}},
      {"Clip", {{"min", 1, true}, {"max", 2, true}}},
      {"Split", {{"split", 1, false}}},
      {"Dropout", {{"ratio", 1, true}}},
  };
  return *table;
}

std::string FreshName(const std::string& base, std::set<std::string>* taken) {
  std::string name = base;
  for (int k = 2; taken->count(name); ++k)
    name = base + "_" + std::to_string(k);
  taken->insert(name);
  return name;
}

}  // namespace

Status ExportNode(const Node& n, onnx::GraphProto* graph,
                  std::set<std::string>* taken) {
  onnx::NodeProto* p = graph->add_node();
  p->set_name(n.name);
  p->set_op_type(n.op);
  for (const auto& in : n.inputs) p->add_input(in);
  for (const auto& out : n.outputs) p->add_output(out);
  std::set<std::string> as_inputs;
  auto it = AttrInputs().find(n.op);
  if (it != AttrInputs().end()) {
    for (const AttrInput& ai : it->second) {
      if (!n.attrs.Has(ai.attr)) continue;
      as_inputs.insert(ai.attr);
      if (n.inputs.size() != 1) {
        return InvalidArgument("node '" + n.name + "' (" + n.op +
                               ") must have one data input, has " +
                               std::to_string(n.inputs.size()));
      }
      std::string name = FreshName(n.name + "." + ai.attr, taken);
      onnx::TensorProto* t = graph->add_initializer();
      if (ai.scalar_float) {
        float v = n.attrs.GetFloat(ai.attr);
        EncodeFloatTensor(name, {}, &v, t);
      } else {
        EncodeInt64Tensor(name, n.attrs.GetInts(ai.attr), t);
      }
      // Absent optional inputs before this one are "" in ONNX.
      while (p->input_size() < ai.index) p->add_input("");
      p->add_input(name);
    }
  }
  for (const auto& [k, v] : n.attrs.map()) {
    if (as_inputs.count(k)) continue;
    ToOnnxAttr(k, v, p->add_attribute());
  }
  return Status::Ok();
}

}  // namespace shoal
