// ONNX TensorProto <-> shoal data: initializers, Constant values, and the
// int64 / float initializers export writes for control inputs.
#ifndef SHOAL_ONNX_ONNX_TENSOR_H_
#define SHOAL_ONNX_ONNX_TENSOR_H_

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "graph/shape.h"
#include "onnx/const_value.h"
#include "util/status.h"

namespace shoal {

// The tensor's dims; fails on a negative extent.
StatusOr<Shape> TensorShape(const onnx::TensorProto& t);

// FLOAT, DOUBLE, FLOAT16, BFLOAT16: decoded as floats; the integer and bool
// types as int64.
bool IsFloatType(int32_t data_type);

// Decodes the data of `t` from raw_data, the typed fields, or an external
// file resolved under `base_dir`. `as_floats`: integer types too become
// floats, straight from raw data (a weight: an int8 one would otherwise
// pass through eight bytes a value on its way to four).
StatusOr<ConstValue> DecodeTensor(const onnx::TensorProto& t,
                                  const std::string& base_dir,
                                  bool as_floats = false);

// Writes a FLOAT tensor as raw_data (little endian); null `data` writes
// zeros.
void EncodeFloatTensor(const std::string& name, const Shape& shape,
                       const float* data, onnx::TensorProto* t);
void EncodeInt64Tensor(const std::string& name,
                       const std::vector<int64_t>& values,
                       onnx::TensorProto* t);

// Writes integer values in [-128, 127] as an INT8 tensor (quantized weights
// and zero points); null `data` writes zeros. InvalidArgument, naming the
// tensor, for a value that is not such an integer.
Status EncodeInt8Tensor(const std::string& name, const Shape& shape,
                        const float* data, onnx::TensorProto* t);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_TENSOR_H_
