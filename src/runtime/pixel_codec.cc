#include "runtime/pixel_codec.h"

#include <cmath>
#include <cstring>

#include "io/pixels.h"

namespace shoal {

namespace {

// Elements per channel of `shape` laid out [N, C, ...], or -1.
int64_t PerChannel(const std::vector<int64_t>& shape, size_t channels) {
  if (shape.size() < 2 || shape[0] != 1 ||
      shape[1] != static_cast<int64_t>(channels) || channels == 0) {
    return -1;
  }
  int64_t n = 1;
  for (size_t i = 2; i < shape.size(); ++i) n *= shape[i];
  return n;
}

}  // namespace

bool EncodePixels(const Tensor& part, const std::vector<float>& mean,
                  const std::vector<float>& std, std::string* bytes) {
  if (mean.size() != std.size()) return false;
  const int64_t per = PerChannel(part.shape, mean.size());
  if (per < 0) return false;
  bytes->resize(part.data.size());
  for (size_t c = 0; c < mean.size(); ++c) {
    for (int64_t i = 0; i < per; ++i) {
      const size_t k = c * per + i;
      const float x = part.data[k];
      // The pixel whose normalised value x would be; then check that it is.
      const float guess = std::nearbyint((x * std[c] + mean[c]) * 255.f);
      if (!(guess >= 0.f && guess <= 255.f)) return false;
      const unsigned u = static_cast<unsigned>(guess);
      const float back = PixelToInput(u, mean[c], std[c]);
      if (std::memcmp(&back, &x, sizeof(float)) != 0) return false;
      (*bytes)[k] = static_cast<char>(u);
    }
  }
  return true;
}

StatusOr<Tensor> DecodePixels(const std::vector<int64_t>& shape,
                              const std::string& bytes,
                              const std::vector<float>& mean,
                              const std::vector<float>& std) {
  if (mean.size() != std.size()) {
    return InvalidArgument("pixel message: mean and std differ in length");
  }
  const int64_t per = PerChannel(shape, mean.size());
  if (per < 0 || per > (int64_t{1} << 31)) {
    return InvalidArgument("pixel message: its shape does not have the " +
                           std::to_string(mean.size()) +
                           " channels its statistics give");
  }
  if (static_cast<int64_t>(bytes.size()) !=
      per * static_cast<int64_t>(mean.size())) {
    return InvalidArgument("pixel message has " + std::to_string(bytes.size()) +
                           " bytes but its shape needs " +
                           std::to_string(per * mean.size()));
  }
  Tensor t(Shape(shape.begin(), shape.end()));
  for (size_t c = 0; c < mean.size(); ++c) {
    for (int64_t i = 0; i < per; ++i) {
      const size_t k = c * per + i;
      t.data[k] =
          PixelToInput(static_cast<unsigned char>(bytes[k]), mean[c], std[c]);
    }
  }
  return t;
}

}  // namespace shoal
