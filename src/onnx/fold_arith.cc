// Folding of elementwise arithmetic and comparisons on constants, with numpy
// broadcasting. Integer results stay exact; a float operand makes the result
// float.
#include <algorithm>
#include <cmath>

#include "onnx/fold_ops.h"

namespace shoal {
namespace {

StatusOr<ConstValue> Apply2(const FoldCtx& c, const std::string& op,
                            const ConstValue& a, const ConstValue& b) {
  Shape out;
  if (!BroadcastShapes(a.shape, b.shape, &out)) {
    return c.Error("shapes " + ShapeToString(a.shape) + " and " +
                   ShapeToString(b.shape) + " do not broadcast");
  }
  RETURN_IF_ERROR(c.Fits(out));
  const std::vector<int64_t> ia = BroadcastIndex(a.shape, out);
  const std::vector<int64_t> ib = BroadcastIndex(b.shape, out);
  const int64_t n = NumElements(out);
  const bool compare = op == "Equal" || op == "Less" || op == "Greater";
  if (compare) {
    std::vector<int64_t> v(n);
    for (int64_t k = 0; k < n; ++k) {
      double x = a.AsDouble(ia[k]), y = b.AsDouble(ib[k]);
      if (!a.is_float && !b.is_float) {  // exact for large int64
        int64_t p = a.ints[ia[k]], q = b.ints[ib[k]];
        v[k] = op == "Equal" ? p == q : op == "Less" ? p < q : p > q;
      } else {
        v[k] = op == "Equal" ? x == y : op == "Less" ? x < y : x > y;
      }
    }
    return ConstValue::Ints(out, v);
  }
  if (a.is_float || b.is_float) {
    std::vector<float> v(n);
    for (int64_t k = 0; k < n; ++k) {
      float x = static_cast<float>(a.AsDouble(ia[k]));
      float y = static_cast<float>(b.AsDouble(ib[k]));
      // Float Mod must be fmod (ONNX: fmod=1), the dividend's sign.
      v[k] = op == "Mod"   ? std::fmod(x, y)
             : op == "Add" ? x + y
             : op == "Sub" ? x - y
             : op == "Mul" ? x * y
             : op == "Div" ? x / y
             : op == "Min" ? std::min(x, y)
                           : std::max(x, y);
    }
    return ConstValue::Floats(out, v);
  }
  std::vector<int64_t> v(n);
  for (int64_t k = 0; k < n; ++k) {
    int64_t x = a.ints[ia[k]], y = b.ints[ib[k]];
    if ((op == "Div" || op == "Mod") && y == 0)
      return c.Error("integer division by zero");
    if (op == "Mod") {
      // fmod=0 (the default): the remainder takes the divisor's sign, as
      // Python's %; fmod=1: the dividend's, as C's %.
      int64_t r = x % y;
      if (c.IntAttr("fmod", 0) == 0 && r != 0 && ((r < 0) != (y < 0))) r += y;
      v[k] = r;
      continue;
    }
    // Integer Div truncates toward zero, as ONNX Runtime does.
    v[k] = op == "Add"   ? x + y
           : op == "Sub" ? x - y
           : op == "Mul" ? x * y
           : op == "Div" ? x / y
           : op == "Min" ? std::min(x, y)
                         : std::max(x, y);
  }
  return ConstValue::Ints(out, v);
}

}  // namespace

StatusOr<ConstValue> FoldBinary(const FoldCtx& c) {
  const std::string& op = c.node.op_type();
  // Min and Max take any number of inputs; the others exactly two.
  ConstValue acc = *c.Value(0);
  for (size_t i = 1; i < c.in.size(); ++i) {
    const ConstValue* b = c.Value(i);
    if (!b) continue;
    ASSIGN_OR_RETURN(acc, Apply2(c, op, acc, *b));
  }
  return acc;
}

StatusOr<ConstValue> FoldUnary(const FoldCtx& c) {
  ConstValue v = *c.Value(0);
  const bool is_not = c.node.op_type() == "Not";
  if (v.is_float) {
    if (is_not) return c.Error("Not of a float tensor");
    for (auto& x : v.floats) x = -x;
  } else {
    for (auto& x : v.ints) x = is_not ? (x == 0) : -x;
  }
  return v;
}

StatusOr<ConstValue> FoldWhere(const FoldCtx& c) {
  const ConstValue &cond = *c.Value(0), &x = *c.Value(1), &y = *c.Value(2);
  Shape xy, out;
  if (!BroadcastShapes(x.shape, y.shape, &xy) ||
      !BroadcastShapes(cond.shape, xy, &out)) {
    return c.Error("inputs do not broadcast");
  }
  RETURN_IF_ERROR(c.Fits(out));
  const auto ic = BroadcastIndex(cond.shape, out);
  const auto ix = BroadcastIndex(x.shape, out);
  const auto iy = BroadcastIndex(y.shape, out);
  const int64_t n = NumElements(out);
  if (x.is_float || y.is_float) {
    std::vector<float> v(n);
    for (int64_t k = 0; k < n; ++k) {
      v[k] = static_cast<float>(cond.AsDouble(ic[k]) != 0 ? x.AsDouble(ix[k])
                                                          : y.AsDouble(iy[k]));
    }
    return ConstValue::Floats(out, v);
  }
  std::vector<int64_t> v(n);
  for (int64_t k = 0; k < n; ++k)
    v[k] = cond.AsDouble(ic[k]) != 0 ? x.ints[ix[k]] : y.ints[iy[k]];
  return ConstValue::Ints(out, v);
}

StatusOr<ConstValue> FoldExpand(const FoldCtx& c) {
  const ConstValue& x = *c.Value(0);
  Shape target = c.Value(1)->ToInts(), out;
  if (!BroadcastShapes(x.shape, target, &out)) {
    return c.Error(ShapeToString(x.shape) + " does not expand to " +
                   ShapeToString(target));
  }
  RETURN_IF_ERROR(c.Fits(out));
  return Pick(x, out, BroadcastIndex(x.shape, out));
}

}  // namespace shoal
