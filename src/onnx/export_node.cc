#include "onnx/export_node.h"

#include <map>
#include <vector>

#include "onnx/onnx_attrs.h"
#include "onnx/onnx_tensor.h"

namespace shoal {
namespace {

// A shoal attribute that opset 13 takes as input `index`. kScale and
// kZeroPoint are a Q or DQ node's: a scalar when there is one value (per
// tensor), else 1-D; the zero point as int8, zeros when absent, since its
// type is what makes ONNX quantize to int8.
enum class AttrKind { kInts, kScalarFloat, kFloats, kScale, kZeroPoint };

struct AttrInput {
  const char* attr;
  int index;
  AttrKind kind;
  // The attribute holding the tensor's shape (Gather's indices_shape); it is
  // not written as an attribute. nullptr: a 1-D tensor (or a scalar).
  const char* shape_attr = nullptr;
};

const std::map<std::string, std::vector<AttrInput>>& AttrInputs() {
  static const auto* table = new std::map<std::string, std::vector<AttrInput>>{
      {"Reshape", {{"shape", 1, AttrKind::kInts}}},
      {"Slice",
       {{"starts", 1, AttrKind::kInts},
        {"ends", 2, AttrKind::kInts},
        {"axes", 3, AttrKind::kInts},
        {"steps", 4, AttrKind::kInts}}},
      {"Pad",
       {{"pads", 1, AttrKind::kInts}, {"value", 2, AttrKind::kScalarFloat}}},
      {"Clip",
       {{"min", 1, AttrKind::kScalarFloat},
        {"max", 2, AttrKind::kScalarFloat}}},
      {"Split", {{"split", 1, AttrKind::kInts}}},
      {"Dropout", {{"ratio", 1, AttrKind::kScalarFloat}}},
      {"Expand", {{"shape", 1, AttrKind::kInts}}},
      {"Gather", {{"indices", 1, AttrKind::kInts, "indices_shape"}}},
      // Resize's roi (input 1) stays absent.
      {"Resize",
       {{"scales", 2, AttrKind::kFloats}, {"sizes", 3, AttrKind::kInts}}},
      {"QuantizeLinear",
       {{"scale", 1, AttrKind::kScale},
        {"zero_point", 2, AttrKind::kZeroPoint}}},
      {"DequantizeLinear",
       {{"scale", 1, AttrKind::kScale},
        {"zero_point", 2, AttrKind::kZeroPoint}}},
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
      if (!n.attrs.Has(ai.attr) && ai.kind != AttrKind::kZeroPoint) continue;
      as_inputs.insert(ai.attr);
      if (ai.shape_attr) as_inputs.insert(ai.shape_attr);
      if (n.inputs.size() != 1) {
        return InvalidArgument("node '" + n.name + "' (" + n.op +
                               ") must have one data input, has " +
                               std::to_string(n.inputs.size()));
      }
      std::string name = FreshName(n.name + "." + ai.attr, taken);
      onnx::TensorProto* t = graph->add_initializer();
      // Per tensor, Q and DQ take scalars; per axis, 1-D tensors.
      const std::vector<float> scale = n.attrs.GetFloats("scale");
      const Shape quant_shape = scale.size() == 1
                                    ? Shape{}
                                    : Shape{static_cast<int64_t>(scale.size())};
      if (ai.kind == AttrKind::kScale) {
        EncodeFloatTensor(name, quant_shape, scale.data(), t);
      } else if (ai.kind == AttrKind::kZeroPoint) {
        const std::vector<int64_t> zp = n.attrs.GetInts(ai.attr);
        std::vector<float> values(scale.size(), 0.f);
        for (size_t i = 0; i < zp.size() && i < values.size(); ++i)
          values[i] = static_cast<float>(zp[i]);
        RETURN_IF_ERROR(EncodeInt8Tensor(name, quant_shape, values.data(), t)
                            .WithContext("node '" + n.name + "'"));
      } else if (ai.kind == AttrKind::kScalarFloat) {
        float v = n.attrs.GetFloat(ai.attr);
        EncodeFloatTensor(name, {}, &v, t);
      } else if (ai.kind == AttrKind::kFloats) {
        const std::vector<float> v = n.attrs.GetFloats(ai.attr);
        EncodeFloatTensor(name, {static_cast<int64_t>(v.size())}, v.data(), t);
      } else {
        EncodeInt64Tensor(name, n.attrs.GetInts(ai.attr), t);
        if (ai.shape_attr) {
          t->clear_dims();
          for (int64_t d : n.attrs.GetInts(ai.shape_attr)) t->add_dims(d);
        }
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
