// 8-bit pixels as model inputs: the normalisation of an image's channels
// and the one expression that turns a pixel into an input value. Apart
// from image decoding (io/image.h) so that a worker, which decodes pixels
// off the wire, needs no image library.
#ifndef SHOAL_IO_PIXELS_H_
#define SHOAL_IO_PIXELS_H_

#include <cstdint>
#include <vector>

#include "graph/weights.h"

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

}  // namespace shoal

#endif  // SHOAL_IO_PIXELS_H_
