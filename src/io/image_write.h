// Writing images: 8-bit pixels as PNG (stb_image_write), e.g. a dataset's
// test images for `shoal infer --image`.
#ifndef SHOAL_IO_IMAGE_WRITE_H_
#define SHOAL_IO_IMAGE_WRITE_H_

#include <cstdint>
#include <string>

#include "util/status.h"

namespace shoal {

// `pixels` holds height rows of width pixels of `channels` bytes each
// (1 gray, 3 RGB). Errors name the file.
Status WritePng(const std::string& path, int64_t width, int64_t height,
                int channels, const uint8_t* pixels);

}  // namespace shoal

#endif  // SHOAL_IO_IMAGE_WRITE_H_
