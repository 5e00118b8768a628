// The model input on the wire in its natural type: an image's 8-bit pixels
// (a quarter of its float32 bytes), with the normalisation applied by the
// receiver. Exact: a part goes as pixels only when every value in it is
// PixelToInput of some pixel (io/pixels.h), which the receiver computes
// again bit for bit; any other input goes as float32.
#ifndef SHOAL_RUNTIME_PIXEL_CODEC_H_
#define SHOAL_RUNTIME_PIXEL_CODEC_H_

#include <string>
#include <vector>

#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// `part` (NCHW, or any rank >= 2 with channels on axis 1) as one byte a
// value, given the mean and std of each of its channels. False, with
// `bytes` unspecified, when a value is not exactly a normalised pixel.
bool EncodePixels(const Tensor& part, const std::vector<float>& mean,
                  const std::vector<float>& std, std::string* bytes);

// The inverse; checks the byte count and the channel statistics against
// the shape.
StatusOr<Tensor> DecodePixels(const std::vector<int64_t>& shape,
                              const std::string& bytes,
                              const std::vector<float>& mean,
                              const std::vector<float>& std);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_PIXEL_CODEC_H_
