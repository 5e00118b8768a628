// Test helpers for src/train (header-only): writing IDX files and small
// datasets by hand.
#ifndef SHOAL_TRAIN_TRAIN_TEST_UTIL_H_
#define SHOAL_TRAIN_TRAIN_TEST_UTIL_H_

#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

namespace shoal {
namespace train_test {

// The bytes of an unsigned-byte IDX file: magic 0x0000080<rank>, the dims
// big-endian, then `data`.
inline std::string IdxBytes(const std::vector<uint32_t>& dims,
                            const std::vector<uint8_t>& data) {
  std::string s = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int sh = 24; sh >= 0; sh -= 8) s.push_back(static_cast<char>(d >> sh));
  s.append(data.begin(), data.end());
  return s;
}

inline bool WriteGz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (!f) return false;
  const bool ok =
      gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) ==
      static_cast<int>(bytes.size());
  return gzclose(f) == Z_OK && ok;
}

// A Fashion-MNIST-shaped directory: `train` and `test` images of 28x28
// whose label is the image's class index (i % 10), pixels a function of it.
inline bool WriteTinyDataset(const std::string& dir, uint32_t train,
                             uint32_t test) {
  auto split = [&](const std::string& stem, uint32_t n) {
    std::vector<uint8_t> px(n * 784), lb(n);
    for (uint32_t i = 0; i < n; ++i) {
      lb[i] = i % 10;
      for (int k = 0; k < 784; ++k)
        px[i * 784 + k] = static_cast<uint8_t>((k % 28 == lb[i] * 2) ? 255 : 0);
    }
    return WriteGz(dir + "/" + stem + "-images-idx3-ubyte.gz",
                   IdxBytes({n, 28, 28}, px)) &&
           WriteGz(dir + "/" + stem + "-labels-idx1-ubyte.gz",
                   IdxBytes({n}, lb));
  };
  return split("train", train) && split("t10k", test);
}

}  // namespace train_test
}  // namespace shoal

#endif  // SHOAL_TRAIN_TRAIN_TEST_UTIL_H_
