#include "io/pixels.h"

#include <random>

namespace shoal {

ImageNormalization DefaultNormalization(int64_t channels) {
  ImageNormalization n;
  if (channels == 1) {
    n.mean = {0.5f};
    n.std = {0.5f};
  }
  return n;
}

Tensor RandomImage(const Shape& shape, uint64_t seed,
                   const ImageNormalization& norm) {
  Tensor t(shape);
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<unsigned> pixel(0, 255);
  const int64_t c = shape.size() >= 2 ? shape[1] : 1;
  const int64_t per_channel = c > 0 ? NumElements(shape) / c : 0;
  for (int64_t i = 0; i < NumElements(shape); ++i) {
    const size_t ch = per_channel > 0 ? (i / per_channel) % c : 0;
    t.data[i] = PixelToInput(pixel(rng), norm.mean[ch % norm.mean.size()],
                             norm.std[ch % norm.std.size()]);
  }
  return t;
}

}  // namespace shoal
