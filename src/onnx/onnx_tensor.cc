#include "onnx/onnx_tensor.h"

#include <cmath>
#include <cstring>

#include "graph/shape_check.h"
#include "onnx/external_data.h"

namespace shoal {
namespace {

using TP = onnx::TensorProto;

float HalfToFloat(uint16_t h) {
  const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  float v;
  if (exp == 0)
    v = std::ldexp(static_cast<float>(man), -24);
  else if (exp == 31)
    v = man ? NAN : INFINITY;
  else
    v = std::ldexp(static_cast<float>(man | 0x400), exp - 25);
  return sign ? -v : v;
}

float BfloatToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

// Bytes per element of raw_data, 0 for types shoal does not read.
size_t ElementBytes(int32_t dt) {
  switch (dt) {
    case TP::FLOAT:
    case TP::INT32:
    case TP::UINT32:
      return 4;
    case TP::DOUBLE:
    case TP::INT64:
    case TP::UINT64:
      return 8;
    case TP::FLOAT16:
    case TP::BFLOAT16:
    case TP::INT16:
    case TP::UINT16:
      return 2;
    case TP::INT8:
    case TP::UINT8:
    case TP::BOOL:
      return 1;
    default:
      return 0;
  }
}

template <typename T>
T Load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// One element of raw_data as float (float types) or int64 (the others).
double RawElement(int32_t dt, const char* p) {
  switch (dt) {
    case TP::FLOAT:
      return Load<float>(p);
    case TP::DOUBLE:
      return Load<double>(p);
    case TP::FLOAT16:
      return HalfToFloat(Load<uint16_t>(p));
    case TP::BFLOAT16:
      return BfloatToFloat(Load<uint16_t>(p));
    case TP::INT32:
      return Load<int32_t>(p);
    case TP::UINT32:
      return Load<uint32_t>(p);
    case TP::INT16:
      return Load<int16_t>(p);
    case TP::UINT16:
      return Load<uint16_t>(p);
    case TP::INT8:
      return Load<int8_t>(p);
    default:
      return Load<uint8_t>(p);  // UINT8, BOOL
  }
}

Status DecodeRaw(const TP& t, const std::string& raw, ConstValue* v) {
  const int32_t dt = t.data_type();
  const size_t eb = ElementBytes(dt);
  const int64_t n = v->size();
  if (raw.size() != static_cast<size_t>(n) * eb) {
    return InvalidArgument(
        "tensor '" + t.name() + "' has " + std::to_string(raw.size()) +
        " bytes of data but its shape " + ShapeToString(v->shape) + " needs " +
        std::to_string(n * eb));
  }
  const char* p = raw.data();
  if (dt == TP::FLOAT) {
    v->floats.resize(n);
    std::memcpy(v->floats.data(), p, raw.size());
  } else if (dt == TP::INT64 || dt == TP::UINT64) {
    v->ints.resize(n);
    std::memcpy(v->ints.data(), p, raw.size());
  } else if (v->is_float) {
    v->floats.resize(n);
    for (int64_t i = 0; i < n; ++i)
      v->floats[i] = static_cast<float>(RawElement(dt, p + i * eb));
  } else {
    v->ints.resize(n);
    for (int64_t i = 0; i < n; ++i)
      v->ints[i] = static_cast<int64_t>(RawElement(dt, p + i * eb));
  }
  return Status::Ok();
}

// The typed repeated fields: which one holds the data depends on the type.
Status DecodeTyped(const TP& t, ConstValue* v) {
  const int32_t dt = t.data_type();
  const int64_t n = v->size();
  int64_t have = 0;
  if (dt == TP::FLOAT) {
    have = t.float_data_size();
    v->floats.assign(t.float_data().begin(), t.float_data().end());
  } else if (dt == TP::DOUBLE) {
    have = t.double_data_size();
    v->floats.assign(t.double_data().begin(), t.double_data().end());
  } else if (dt == TP::INT64) {
    have = t.int64_data_size();
    v->ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (dt == TP::UINT32 || dt == TP::UINT64) {
    have = t.uint64_data_size();
    v->ints.assign(t.uint64_data().begin(), t.uint64_data().end());
  } else if (dt == TP::FLOAT16 || dt == TP::BFLOAT16) {
    have = t.int32_data_size();
    for (int32_t bits : t.int32_data()) {
      uint16_t h = static_cast<uint16_t>(bits);
      v->floats.push_back(dt == TP::FLOAT16 ? HalfToFloat(h)
                                            : BfloatToFloat(h));
    }
  } else {
    have = t.int32_data_size();
    v->ints.assign(t.int32_data().begin(), t.int32_data().end());
  }
  if (have != n) {
    return InvalidArgument("tensor '" + t.name() + "' has " +
                           std::to_string(have) + " values but its shape " +
                           ShapeToString(v->shape) + " needs " +
                           std::to_string(n));
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Shape> TensorShape(const onnx::TensorProto& t) {
  Shape s(t.dims().begin(), t.dims().end());
  // Bounds the element count, so that DecodeRaw's byte count (at most 8
  // bytes an element) cannot overflow either.
  RETURN_IF_ERROR(CheckShape(s, "tensor '" + t.name() + "'"));
  return s;
}

bool IsFloatType(int32_t dt) {
  return dt == TP::FLOAT || dt == TP::DOUBLE || dt == TP::FLOAT16 ||
         dt == TP::BFLOAT16;
}

StatusOr<ConstValue> DecodeTensor(const onnx::TensorProto& t,
                                  const std::string& base_dir, bool as_floats) {
  const int32_t dt = t.data_type();
  if (ElementBytes(dt) == 0) {
    return Unsupported("tensor '" + t.name() + "' has data type " +
                       TP::DataType_Name(static_cast<TP::DataType>(dt)) +
                       " (shoal reads float and integer tensors)");
  }
  ConstValue v;
  // int64 raw data is copied as int64 whatever is_float says.
  v.is_float =
      IsFloatType(dt) || (as_floats && dt != TP::INT64 && dt != TP::UINT64);
  v.data_type = dt;
  ASSIGN_OR_RETURN(v.shape, TensorShape(t));
  if (t.data_location() == TP::EXTERNAL) {
    ASSIGN_OR_RETURN(std::string raw, ReadExternalData(t, base_dir));
    RETURN_IF_ERROR(DecodeRaw(t, raw, &v));
  } else if (t.has_raw_data()) {
    RETURN_IF_ERROR(DecodeRaw(t, t.raw_data(), &v));
  } else {
    RETURN_IF_ERROR(DecodeTyped(t, &v));
  }
  if (as_floats && !v.ints.empty()) {  // typed fields, or int64
    v.floats.assign(v.ints.begin(), v.ints.end());
    v.ints.clear();
    v.is_float = true;
  }
  return v;
}

void EncodeFloatTensor(const std::string& name, const Shape& shape,
                       const float* data, onnx::TensorProto* t) {
  t->set_name(name);
  t->set_data_type(TP::FLOAT);
  for (int64_t d : shape) t->add_dims(d);
  const size_t bytes = static_cast<size_t>(NumElements(shape)) * sizeof(float);
  std::string* raw = t->mutable_raw_data();
  if (data)
    raw->assign(reinterpret_cast<const char*>(data), bytes);
  else
    raw->assign(bytes, '\0');
}

void EncodeInt64Tensor(const std::string& name,
                       const std::vector<int64_t>& values,
                       onnx::TensorProto* t) {
  t->set_name(name);
  t->set_data_type(TP::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  t->mutable_raw_data()->assign(reinterpret_cast<const char*>(values.data()),
                                values.size() * sizeof(int64_t));
}

namespace {

StatusOr<std::string> Int8Bytes(const std::string& name, const float* data,
                                int64_t n) {
  std::string bytes(static_cast<size_t>(n), '\0');
  for (int64_t i = 0; data && i < n; ++i) {
    const float v = data[i];
    if (!(v >= -128.f && v <= 127.f) || v != std::nearbyint(v)) {
      return InvalidArgument("tensor '" + name + "' element " +
                             std::to_string(i) + " is " + std::to_string(v) +
                             ", not an int8 value");
    }
    bytes[i] = static_cast<char>(static_cast<int8_t>(v));
  }
  return bytes;
}

}  // namespace

Status EncodeInt8Tensor(const std::string& name, const Shape& shape,
                        const float* data, onnx::TensorProto* t) {
  ASSIGN_OR_RETURN(std::string bytes,
                   Int8Bytes(name, data, NumElements(shape)));
  t->set_name(name);
  t->set_data_type(TP::INT8);
  for (int64_t d : shape) t->add_dims(d);
  t->set_raw_data(std::move(bytes));
  return Status::Ok();
}

}  // namespace shoal
