// Reading and writing ONNX model files (protobuf), with errors that name the
// file instead of crashes or silent partial models.
#ifndef SHOAL_ONNX_ONNX_FILE_H_
#define SHOAL_ONNX_ONNX_FILE_H_

#include <onnx/onnx_pb.h>

#include <string>

#include "util/status.h"

namespace shoal {

// NotFound if `path` cannot be opened; InvalidArgument if it is not a
// complete ONNX model (truncated, random bytes, no graph, no opset).
Status ReadOnnxFile(const std::string& path, onnx::ModelProto* model);

Status WriteOnnxFile(const onnx::ModelProto& model, const std::string& path);

// The directory part of `path` ("." when there is none), for resolving
// external data files.
std::string DirName(const std::string& path);

}  // namespace shoal

#endif  // SHOAL_ONNX_ONNX_FILE_H_
