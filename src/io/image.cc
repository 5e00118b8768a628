#include "io/image.h"

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include <memory>

namespace shoal {

StatusOr<Tensor> LoadImage(const std::string& path, const Shape& shape,
                           const ImageNormalization& norm) {
  if (shape.size() != 4 || shape[0] != 1 || (shape[1] != 1 && shape[1] != 3)) {
    return InvalidArgument(
        "images feed models with a 1xCxHxW input, C = 1 or 3; this "
        "model's input is " +
        ShapeToString(shape));
  }
  const int c = static_cast<int>(shape[1]);
  const int h = static_cast<int>(shape[2]), w = static_cast<int>(shape[3]);
  if (norm.mean.size() != static_cast<size_t>(c) ||
      norm.std.size() != static_cast<size_t>(c)) {
    return InvalidArgument("--mean and --std need " + std::to_string(c) +
                           " values each");
  }
  int iw = 0, ih = 0, ic = 0;
  std::unique_ptr<unsigned char, void (*)(void*)> pixels(
      stbi_load(path.c_str(), &iw, &ih, &ic, c), stbi_image_free);
  if (!pixels) {
    return InvalidArgument("cannot read image '" + path +
                           "': " + stbi_failure_reason());
  }
  std::vector<unsigned char> resized(static_cast<size_t>(w) * h * c);
  if (!stbir_resize_uint8(pixels.get(), iw, ih, 0, resized.data(), w, h, 0,
                          c)) {
    return Internal("resizing '" + path + "' failed");
  }
  Tensor t(shape);
  for (int ch = 0; ch < c; ++ch)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        t.data[(static_cast<size_t>(ch) * h + y) * w + x] =
            PixelToInput(resized[(static_cast<size_t>(y) * w + x) * c + ch],
                         norm.mean[ch], norm.std[ch]);
      }
  return t;
}

}  // namespace shoal
