// Tensor data kept outside the model file (data_location EXTERNAL), as
// exporters write models over protobuf's 2 GB limit.
#ifndef SHOAL_ONNX_EXTERNAL_DATA_H_
#define SHOAL_ONNX_EXTERNAL_DATA_H_

#include <onnx/onnx_pb.h>

#include <string>

#include "util/status.h"

namespace shoal {

// Reads the bytes of `t` from its `location` (relative to `base_dir`), at
// `offset`, `length` bytes (to the end of the file when absent).
StatusOr<std::string> ReadExternalData(const onnx::TensorProto& t,
                                       const std::string& base_dir);

}  // namespace shoal

#endif  // SHOAL_ONNX_EXTERNAL_DATA_H_
