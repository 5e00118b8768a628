#include "onnx/fold_constants.h"

#include <cmath>
#include <functional>
#include <map>

#include "graph/shape_check.h"
#include "onnx/fold_ops.h"
#include "onnx/onnx_attrs.h"
#include "onnx/onnx_tensor.h"

namespace shoal {
namespace {

using FoldFn = std::function<StatusOr<ConstValue>(const FoldCtx&)>;

StatusOr<ConstValue> FoldConstant(const FoldCtx& c) {
  if (const auto* a = FindAttr(c.node, "value")) {
    return DecodeTensor(a->t(), c.base_dir);
  }
  if (const auto* a = FindAttr(c.node, "value_float")) {
    return ConstValue::Floats({}, {a->f()});
  }
  if (const auto* a = FindAttr(c.node, "value_floats")) {
    return ConstValue::Floats({a->floats_size()},
                              {a->floats().begin(), a->floats().end()});
  }
  if (const auto* a = FindAttr(c.node, "value_int")) {
    return ConstValue::Ints({}, {a->i()});
  }
  if (const auto* a = FindAttr(c.node, "value_ints")) {
    return ConstValue::Ints({a->ints_size()},
                            {a->ints().begin(), a->ints().end()});
  }
  std::string kind = c.node.attribute_size() ? c.node.attribute(0).name() : "";
  return Unsupported(
      "Constant with " +
      (kind.empty() ? std::string("no value") : "'" + kind + "'") +
      " (shoal reads value, value_float(s), value_int(s))");
}

// Shape (with opset 15's start / end) and Size of a known shape.
StatusOr<ConstValue> FoldShape(const FoldCtx& c) {
  const Shape& s = *c.in[0].shape;
  if (c.node.op_type() == "Size") return ConstValue::Ints({}, {NumElements(s)});
  const int64_t r = static_cast<int64_t>(s.size());
  int64_t start = c.IntAttr("start", 0), end = c.IntAttr("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, start, r);
  std::vector<int64_t> dims(s.begin() + start, s.begin() + end);
  return ConstValue::Ints({end - start}, dims);
}

StatusOr<ConstValue> FoldCast(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  const int64_t to = c.IntAttr("to", 0);
  if (to == onnx::TensorProto::STRING || to == 0) {
    return c.Error("cannot cast to type " + std::to_string(to));
  }
  if (IsFloatType(static_cast<int32_t>(to))) {
    return ConstValue::Floats(x.shape, x.ToFloats());
  }
  std::vector<int64_t> v(x.size());
  for (int64_t i = 0; i < x.size(); ++i) {
    v[i] = to == onnx::TensorProto::BOOL ? (x.AsDouble(i) != 0) : x.AsInt(i);
  }
  return ConstValue::Ints(x.shape, v);
}

StatusOr<ConstValue> FoldConstantOfShape(const FoldCtx& c) {
  const ConstValue& shape = *c.Value(0);
  Shape s = shape.ToInts();
  for (int64_t d : s)
    if (d < 0) return c.Error("negative extent in " + ShapeToString(s));
  RETURN_IF_ERROR(c.Fits(s));
  ConstValue fill = ConstValue::Floats({1}, {0.f});
  if (const auto* a = FindAttr(c.node, "value")) {
    ASSIGN_OR_RETURN(fill, DecodeTensor(a->t(), c.base_dir));
    if (fill.size() != 1) return c.Error("value must have one element");
  }
  if (fill.is_float) {
    return ConstValue::Floats(
        s, std::vector<float>(NumElements(s), fill.floats[0]));
  }
  return ConstValue::Ints(s,
                          std::vector<int64_t>(NumElements(s), fill.ints[0]));
}

StatusOr<ConstValue> FoldRange(const FoldCtx& c) {
  const ConstValue *start = c.Value(0), *limit = c.Value(1),
                   *delta = c.Value(2);
  if (start->size() != 1 || limit->size() != 1 || delta->size() != 1) {
    return c.Error("start, limit and delta must be scalars");
  }
  const double s = start->AsDouble(0), l = limit->AsDouble(0),
               d = delta->AsDouble(0);
  if (d == 0) return c.Error("delta is 0");
  // The count as a double first: (l - s) / d may be far past int64.
  const double count = std::max(0.0, std::ceil((l - s) / d));
  if (!(count <= static_cast<double>(kMaxFoldedElements))) {
    return c.Error("the range from " + std::to_string(s) + " to " +
                   std::to_string(l) + " by " + std::to_string(d) +
                   " has over " + std::to_string(kMaxFoldedElements) +
                   " elements, the limit of a folded value");
  }
  const int64_t n = static_cast<int64_t>(count);
  if (start->is_float || limit->is_float || delta->is_float) {
    std::vector<float> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>(s + i * d);
    return ConstValue::Floats({n}, v);
  }
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = start->ints[0] + i * delta->ints[0];
  return ConstValue::Ints({n}, v);
}

const std::map<std::string, FoldFn>& Rules() {
  static const auto* rules = new std::map<std::string, FoldFn>{
      {"Constant", FoldConstant},
      {"Shape", FoldShape},
      {"Size", FoldShape},
      {"Cast", FoldCast},
      {"ConstantOfShape", FoldConstantOfShape},
      {"Range", FoldRange},
      {"Add", FoldBinary},
      {"Sub", FoldBinary},
      {"Mul", FoldBinary},
      {"Div", FoldBinary},
      {"Mod", FoldBinary},
      {"Min", FoldBinary},
      {"Max", FoldBinary},
      {"Equal", FoldBinary},
      {"Less", FoldBinary},
      {"Greater", FoldBinary},
      {"Neg", FoldUnary},
      {"Not", FoldUnary},
      {"Where", FoldWhere},
      {"Expand", FoldExpand},
      {"Concat", FoldConcat},
      {"Reshape", FoldReshape},
      {"Flatten", FoldReshape},
      {"Unsqueeze", FoldUnsqueeze},
      {"Squeeze", FoldSqueeze},
      {"Gather", FoldGather},
      {"Slice", FoldSlice},
      {"Transpose", FoldTranspose},
      {"ScatterND", FoldScatterND},
  };
  return *rules;
}

}  // namespace

bool FoldCtx::HasAttr(const std::string& name) const {
  return FindAttr(node, name) != nullptr;
}

int64_t FoldCtx::IntAttr(const std::string& name, int64_t def) const {
  const auto* a = FindAttr(node, name);
  return a ? a->i() : def;
}

std::vector<int64_t> FoldCtx::IntsAttr(const std::string& name) const {
  const auto* a = FindAttr(node, name);
  if (!a) return {};
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Status FoldCtx::Error(const std::string& what) const {
  return InvalidArgument(node.op_type() + " on constants: " + what);
}

Status FoldCtx::Fits(const Shape& out) const {
  ASSIGN_OR_RETURN(const int64_t n, CheckedElements(out, "folded value"));
  if (n > kMaxFoldedElements) {
    return Error("the folded value " + ShapeToString(out) + " would hold " +
                 std::to_string(n) + " elements, over the limit of " +
                 std::to_string(kMaxFoldedElements));
  }
  return Status::Ok();
}

bool IsFoldableOp(const std::string& op) { return Rules().count(op) != 0; }

std::vector<std::string> FoldableOps() {
  std::vector<std::string> out;
  for (const auto& [op, fn] : Rules()) out.push_back(op);
  return out;
}

bool FoldNeedsValue(const std::string& op, int i) {
  return !((op == "Shape" || op == "Size") && i == 0);
}

bool CanFold(const onnx::NodeProto& node, const std::vector<FoldInput>& in) {
  if (!IsFoldableOp(node.op_type())) return false;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].present) continue;
    bool needs = FoldNeedsValue(node.op_type(), static_cast<int>(i));
    if (needs ? !in[i].value : !in[i].shape) return false;
  }
  return true;
}

StatusOr<std::vector<ConstValue>> FoldNode(const onnx::NodeProto& node,
                                           int64_t opset,
                                           const std::vector<FoldInput>& in,
                                           const std::string& base_dir) {
  FoldCtx c{node, opset, in, base_dir};
  // Every rule reads the inputs it needs as present; check before use.
  const std::string& op = node.op_type();
  static const std::map<std::string, size_t> kRequired = {
      {"Shape", 1},   {"Size", 1},      {"Cast", 1},    {"ConstantOfShape", 1},
      {"Range", 3},   {"Add", 2},       {"Sub", 2},     {"Mul", 2},
      {"Div", 2},     {"Min", 1},       {"Max", 1},     {"Equal", 2},
      {"Less", 2},    {"Greater", 2},   {"Neg", 1},     {"Not", 1},
      {"Where", 3},   {"Expand", 2},    {"Concat", 1},  {"Reshape", 1},
      {"Flatten", 1}, {"Unsqueeze", 1}, {"Squeeze", 1}, {"Gather", 2},
      {"Slice", 1},   {"Transpose", 1}};
  auto req = kRequired.find(op);
  if (req != kRequired.end()) {
    for (size_t i = 0; i < req->second; ++i) {
      if (i >= in.size() || !in[i].present) {
        return c.Error("required input " + std::to_string(i) + " is absent");
      }
    }
  }
  ASSIGN_OR_RETURN(ConstValue v, Rules().at(op)(c));
  if (!v.is_float && static_cast<int64_t>(v.ints.size()) != v.size()) {
    return Internal(op + " folding produced a malformed value");
  }
  if (v.is_float && static_cast<int64_t>(v.floats.size()) != v.size()) {
    return Internal(op + " folding produced a malformed value");
  }
  std::vector<ConstValue> out;
  out.push_back(std::move(v));
  return out;
}

ConstValue Pick(const ConstValue& src, Shape out_shape,
                const std::vector<int64_t>& index) {
  ConstValue v;
  v.is_float = src.is_float;
  v.shape = std::move(out_shape);
  if (src.is_float) {
    v.floats.reserve(index.size());
    for (int64_t i : index) v.floats.push_back(src.floats[i]);
  } else {
    v.ints.reserve(index.size());
    for (int64_t i : index) v.ints.push_back(src.ints[i]);
  }
  return v;
}

bool BroadcastShapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i + a.size() >= r ? a[i + a.size() - r] : 1;
    int64_t db = i + b.size() >= r ? b[i + b.size() - r] : 1;
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

std::vector<int64_t> BroadcastIndex(const Shape& in, const Shape& out) {
  const size_t r = out.size(), off = r - in.size();
  std::vector<int64_t> in_strides = Strides(in);
  const int64_t n = NumElements(out);
  std::vector<int64_t> index(n);
  std::vector<int64_t> pos(r, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t src = 0;
    for (size_t d = off; d < r; ++d)
      if (in[d - off] != 1) src += pos[d] * in_strides[d - off];
    index[k] = src;
    for (int d = static_cast<int>(r) - 1; d >= 0; --d) {
      if (++pos[d] < out[d]) break;
      pos[d] = 0;
    }
  }
  return index;
}

}  // namespace shoal
