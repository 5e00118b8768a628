#include "io/image_write.h"

#include <stb/stb_image_write.h>

#include <cerrno>
#include <cstring>

namespace shoal {

Status WritePng(const std::string& path, int64_t width, int64_t height,
                int channels, const uint8_t* pixels) {
  if (width < 1 || height < 1 || width > (1 << 16) || height > (1 << 16) ||
      channels < 1 || channels > 4)
    return InvalidArgument("cannot write '" + path +
                           "': " + std::to_string(width) + "x" +
                           std::to_string(height) + "x" +
                           std::to_string(channels) + " is no PNG image");
  errno = 0;
  const int w = static_cast<int>(width), h = static_cast<int>(height);
  if (!stbi_write_png(path.c_str(), w, h, channels, pixels, w * channels))
    return InvalidArgument(
        "cannot write '" + path + "'" +
        (errno ? std::string(": ") + std::strerror(errno) : std::string()));
  return Status::Ok();
}

}  // namespace shoal
