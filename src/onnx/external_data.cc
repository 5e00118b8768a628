#include "onnx/external_data.h"

#include <filesystem>
#include <fstream>

namespace shoal {

StatusOr<std::string> ReadExternalData(const onnx::TensorProto& t,
                                       const std::string& base_dir) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t.external_data()) {
    if (kv.key() == "location") location = kv.value();
    if (kv.key() != "offset" && kv.key() != "length") continue;
    // Whole decimal numbers only: stoll alone takes "12abc" as 12 and
    // throws on values past int64.
    int64_t v = -1;
    try {
      size_t used = 0;
      v = std::stoll(kv.value(), &used);
      if (used != kv.value().size()) v = -1;
    } catch (const std::exception&) {
      v = -1;
    }
    if (v < 0) {
      return InvalidArgument("tensor '" + t.name() + "': external data " +
                             kv.key() + " '" + kv.value() +
                             "' is not a number of bytes");
    }
    (kv.key() == "offset" ? offset : length) = v;
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
  // The file itself, with every symlink followed, must be inside the
  // directory too: a data.bin linked to /etc/passwd passed the rule above,
  // and `shoal export` copied the password file into its output.
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical(base_dir, ec);
  const std::filesystem::path real = std::filesystem::canonical(path, ec);
  if (ec) return NotFound(what + " file " + path + " cannot be opened");
  const auto rel = real.lexically_relative(dir);
  if (dir.empty() || rel.empty() || *rel.begin() == "..") {
    return InvalidArgument(what + " file " + path + " is " + real.string() +
                           ", outside the model's directory " + dir.string() +
                           " (a symbolic link leads out of it)");
  }
  if (!std::filesystem::is_regular_file(real, ec)) {
    return InvalidArgument(what + " file " + path + " is not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(what + " file " + path + " cannot be opened");
  in.seekg(0, std::ios::end);
  const int64_t file_size = static_cast<int64_t>(in.tellg());
  // Compared without adding offset and length, which can overflow.
  if (offset > file_size) {
    return InvalidArgument(what + " starts at byte " + std::to_string(offset) +
                           " of " + path + ", which has " +
                           std::to_string(file_size));
  }
  if (length < 0) length = file_size - offset;
  if (length > file_size - offset) {
    return InvalidArgument(what + " wants " + std::to_string(length) +
                           " bytes from byte " + std::to_string(offset) +
                           " of " + path + ", which has " +
                           std::to_string(file_size));
  }
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in) return InvalidArgument(what + ": read error in " + path);
  return bytes;
}

}  // namespace shoal
