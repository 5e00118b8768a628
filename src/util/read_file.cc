#include "util/read_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "util/units.h"

namespace shoal {

StatusOr<std::string> ReadBoundedFile(const std::string& path,
                                      int64_t max_bytes,
                                      const std::string& what) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    return NotFound("cannot read " + what + " " + path + ": no such file");
  if (!std::filesystem::is_regular_file(st)) {
    return InvalidArgument("cannot read " + what + " " + path +
                           ": not a regular file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    return InvalidArgument("cannot read " + what + " " + path + ": " +
                           ec.message());
  }
  if (size > static_cast<uint64_t>(max_bytes)) {
    return InvalidArgument(
        what + " " + path + " is " + HumanBytes(static_cast<int64_t>(size)) +
        ", more than the " + HumanBytes(max_bytes) + " such a file may be");
  }
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    return NotFound("cannot read " + what + " " + path + ": " +
                    std::strerror(errno));
  }
  // One byte past the size measured: a file that grew since is refused,
  // not followed.
  std::string bytes(static_cast<size_t>(size) + 1, '\0');
  f.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(f.gcount()));
  if (bytes.size() > size) {
    return InvalidArgument(what + " " + path + " grew while it was read");
  }
  return bytes;
}

}  // namespace shoal
