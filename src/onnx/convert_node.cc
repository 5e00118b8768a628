#include "onnx/convert_node.h"

#include "graph/op_registry.h"
#include "onnx/convert_rules.h"
#include "onnx/onnx_attrs.h"

namespace shoal {

StatusOr<std::vector<int64_t>> ConvertCtx::ConstInts(int i,
                                                     const std::string& what,
                                                     bool* given) {
  if (given) *given = HasInput(i);
  if (!HasInput(i)) return std::vector<int64_t>{};
  ASSIGN_OR_RETURN(const ConstValue* v, env->Constant(i));
  if (!v) {
    return Unsupported(what + " (input '" + node.input(i) +
                       "') is computed at run time; shoal needs it constant");
  }
  return v->ToInts();
}

StatusOr<float> ConvertCtx::ConstScalar(int i, const std::string& what) {
  ASSIGN_OR_RETURN(const ConstValue* v, env->Constant(i));
  if (!v) {
    return Unsupported(what + " (input '" + node.input(i) +
                       "') is computed at run time; shoal needs it constant");
  }
  if (v->size() != 1) {
    return InvalidArgument(what + " (input '" + node.input(i) +
                           "') must be a scalar, got " +
                           ShapeToString(v->shape));
  }
  return static_cast<float>(v->AsDouble(0));
}

const onnx::AttributeProto* ConvertCtx::Take(const std::string& name) {
  consumed.insert(name);
  return FindAttr(node, name);
}

void ConvertCtx::DropInput(int i) {
  if (i < static_cast<int>(dropped.size())) dropped[i] = true;
}

Status ConvertCtx::Unsupported(const std::string& what) const {
  return ::shoal::Unsupported(node.op_type() + ": " + what);
}

Status ConvertNode(const onnx::NodeProto& node, int64_t opset, ConvertEnv* env,
                   Node* out) {
  ConvertCtx c{node, opset, env, out, {}, {}};
  c.dropped.assign(node.input_size(), false);
  out->op = node.op_type();
  if (const ConvertRule* rule = FindConvertRule(node.op_type())) {
    RETURN_IF_ERROR((*rule)(&c));
  }
  const OpSchema* schema = OpRegistry::Global().Find(out->op);
  if (!schema) {
    return Unsupported("op '" + node.op_type() + "' is not supported");
  }
  for (const auto& a : node.attribute()) {
    if (c.consumed.count(a.name())) continue;
    if (!schema->attrs().count(a.name())) {
      return Unsupported("attribute '" + a.name() + "' of op '" +
                         node.op_type() + "' is not supported");
    }
    auto v = FromOnnxAttr(a);
    if (!v.ok()) {
      return v.status().WithContext("op '" + node.op_type() + "'");
    }
    out->attrs.Set(a.name(), *v);
  }
  out->inputs.clear();
  for (int i = 0; i < node.input_size(); ++i)
    if (!c.dropped[i]) out->inputs.push_back(node.input(i));
  while (!out->inputs.empty() && out->inputs.back().empty())
    out->inputs.pop_back();
  // Optional outputs past what shoal computes (Dropout's mask, MaxPool's
  // indices, BN's training statistics) may go if nothing reads them.
  out->outputs.assign(node.output().begin(), node.output().end());
  while (static_cast<int>(out->outputs.size()) > schema->max_outputs() ||
         (!out->outputs.empty() && out->outputs.back().empty())) {
    const int last = static_cast<int>(out->outputs.size()) - 1;
    if (!out->outputs[last].empty() && env->OutputUsed(last)) {
      return Unsupported("output " + std::to_string(last) + " ('" +
                         out->outputs[last] + "') of op '" + node.op_type() +
                         "' is read, but shoal does not compute it");
    }
    out->outputs.pop_back();
  }
  return Status::Ok();
}

}  // namespace shoal
