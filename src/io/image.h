// Image input: decode (PNG, JPEG, BMP... via stb_image), resize to the
// model's input, normalise per channel, lay out as NCHW float32.
#ifndef SHOAL_IO_IMAGE_H_
#define SHOAL_IO_IMAGE_H_

#include <string>
#include <vector>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

struct ImageNormalization {
  // ImageNet statistics, on pixel values scaled to [0, 1].
  std::vector<float> mean = {0.485f, 0.456f, 0.406f};
  std::vector<float> std = {0.229f, 0.224f, 0.225f};
};

// ImageNet's for RGB, 0.5 and 0.5 for one channel (the grayscale models).
ImageNormalization DefaultNormalization(int64_t channels);

// The model input value of 8-bit pixel `u`. One expression for every place
// that turns pixels into inputs (LoadImage, RandomImage, a worker decoding
// pixels off the wire), so that each gets the same float bit for bit.
inline float PixelToInput(unsigned u, float mean, float std) {
  return (static_cast<float>(u) / 255.f - mean) / std;
}

// An image of uniformly random pixels (seeded), normalised as LoadImage
// does: what a camera would give a model whose input is `shape`.
Tensor RandomImage(const Shape& shape, uint64_t seed,
                   const ImageNormalization& norm);

// `shape` is the model input [1, C, H, W] with C = 1 (grayscale) or 3 (RGB).
StatusOr<Tensor> LoadImage(const std::string& path, const Shape& shape,
                           const ImageNormalization& norm);

}  // namespace shoal

#endif  // SHOAL_IO_IMAGE_H_
