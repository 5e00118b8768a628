#include "onnx/onnx_file.h"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>

namespace shoal {
namespace {

// Closes the descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

Status ReadOnnxFile(const std::string& path, onnx::ModelProto* model) {
  Fd f{open(path.c_str(), O_RDONLY)};
  if (f.fd < 0) {
    std::string why = std::strerror(errno);
    if (errno == ENOENT) return NotFound(path + ": no such file");
    return InvalidArgument(path + ": cannot open (" + why + ")");
  }
  google::protobuf::io::FileInputStream raw(f.fd);
  google::protobuf::io::CodedInputStream in(&raw);
  // Large models (vgg16 is 0.5 GB) exceed protobuf's default 64 MB guard.
  in.SetTotalBytesLimit(INT_MAX);
  if (!model->ParseFromCodedStream(&in)) {
    return InvalidArgument(path +
                           ": not a valid ONNX model (the protobuf does not "
                           "parse: truncated or not an ONNX file)");
  }
  if (raw.GetErrno() != 0) {
    return InvalidArgument(path + ": read error (" +
                           std::strerror(raw.GetErrno()) + ")");
  }
  // A truncated file may still parse when the cut falls between fields;
  // a model always has a graph and declares its opset.
  if (!model->has_graph()) {
    return InvalidArgument(path +
                           ": not a valid ONNX model (no graph; "
                           "truncated or not an ONNX file)");
  }
  if (model->opset_import_size() == 0) {
    return InvalidArgument(path +
                           ": not a valid ONNX model (no opset_import; "
                           "truncated or not an ONNX file)");
  }
  return Status::Ok();
}

Status WriteOnnxFile(const onnx::ModelProto& model, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return InvalidArgument(path + ": cannot open for writing");
  if (!model.SerializeToOstream(&out)) {
    return Internal(path + ": cannot serialise the model (over 2 GB?)");
  }
  out.close();
  if (!out) return InvalidArgument(path + ": write failed");
  return Status::Ok();
}

std::string DirName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace shoal
