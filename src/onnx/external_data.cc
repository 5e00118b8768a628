#include "onnx/external_data.h"

#include <fstream>

namespace shoal {

StatusOr<std::string> ReadExternalData(const onnx::TensorProto& t,
                                       const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    try {
      if (kv.key() == "location") location = kv.value();
      if (kv.key() == "offset") offset = std::stoll(kv.value());
      if (kv.key() == "length") length = std::stoll(kv.value());
    } catch (const std::exception&) {
      return InvalidArgument("tensor '" + t.name() + "': external data " +
                             kv.key() + " '" + kv.value() +
                             "' is not a number");
    }
  }
  const std::string what = "tensor '" + t.name() + "': external data";
  if (location.empty()) return InvalidArgument(what + " has no location");
  // The ONNX spec makes locations relative to the model; refusing others
  // keeps a model file from reading arbitrary files.
  if (location[0] == '/' || location.find("..") != std::string::npos) {
    return InvalidArgument(what + " location '" + location +
                           "' must be a relative path inside the model's "
                           "directory");
  }
  if (offset < 0) return InvalidArgument(what + " has a negative offset");
  const std::string path = base_dir + "/" + location;
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(what + " file " + path + " cannot be opened");
  in.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(in.tellg());
  if (length < 0) length = file_size - offset;
  if (offset + length > file_size || length < 0) {
    return InvalidArgument(what + " wants bytes [" + std::to_string(offset) +
                           ", " + std::to_string(offset + length) + ") of " +
                           path + ", which has " + std::to_string(file_size));
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in) return InvalidArgument(what + ": read error in " + path);
  return bytes;
}

}  // namespace shoal
