// A tensor whose value is known at import time: an initializer, a Constant
// node, or what folding them gives. Integers stay int64 so ONNX's sentinels
// (INT64_MAX as a Slice end) survive exactly; floats are f32 as in shoal.
#ifndef SHOAL_ONNX_CONST_VALUE_H_
#define SHOAL_ONNX_CONST_VALUE_H_

#include <cstdint>
#include <vector>

#include "graph/shape.h"

namespace shoal {

struct ConstValue {
  bool is_float = false;
  // The ONNX element type it was stored as (TensorProto::DataType); 0 for a
  // value folded at import time.
  int32_t data_type = 0;
  Shape shape;
  std::vector<int64_t> ints;  // used when !is_float (bool is 0/1)
  std::vector<float> floats;  // used when is_float

  static ConstValue Ints(Shape s, std::vector<int64_t> v) {
    ConstValue c;
    c.shape = std::move(s);
    c.ints = std::move(v);
    return c;
  }
  static ConstValue Floats(Shape s, std::vector<float> v) {
    ConstValue c;
    c.is_float = true;
    c.shape = std::move(s);
    c.floats = std::move(v);
    return c;
  }

  int64_t size() const { return NumElements(shape); }
  double AsDouble(int64_t i) const {
    return is_float ? floats[i] : static_cast<double>(ints[i]);
  }
  int64_t AsInt(int64_t i) const {
    return is_float ? static_cast<int64_t>(floats[i]) : ints[i];
  }
  std::vector<int64_t> ToInts() const {
    if (!is_float) return ints;
    return std::vector<int64_t>(floats.begin(), floats.end());
  }
  std::vector<float> ToFloats() const {
    if (is_float) return floats;
    return std::vector<float>(ints.begin(), ints.end());
  }
};

}  // namespace shoal

#endif  // SHOAL_ONNX_CONST_VALUE_H_
