// Image input: decode (PNG, JPEG or BMP via stb_image), resize to the
// model's input, normalise per channel, lay out as NCHW float32.
#ifndef SHOAL_IO_IMAGE_H_
#define SHOAL_IO_IMAGE_H_

#include <string>
#include <vector>

#include "graph/weights.h"
#include "io/pixels.h"
#include "util/status.h"

namespace shoal {

// `shape` is the model input [1, C, H, W] with C = 1 (grayscale) or 3 (RGB).
StatusOr<Tensor> LoadImage(const std::string& path, const Shape& shape,
                           const ImageNormalization& norm);
// The same from the file's bytes; `origin` names it in errors.
StatusOr<Tensor> DecodeImage(const std::string& bytes,
                             const std::string& origin, const Shape& shape,
                             const ImageNormalization& norm);

}  // namespace shoal

#endif  // SHOAL_IO_IMAGE_H_
