#include "runtime/pixel_codec.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "io/pixels.h"

namespace shoal {
namespace {

TEST(PixelCodec, ImagesGoAsPixelsAndComeBackBitForBit) {
  const ImageNormalization n = DefaultNormalization(3);
  const Tensor img = RandomImage(Shape{1, 3, 7, 5}, 3, n);
  std::string bytes;
  ASSERT_TRUE(EncodePixels(img, n.mean, n.std, &bytes));
  EXPECT_EQ(bytes.size(), img.data.size()) << "a byte a value";
  auto back = DecodePixels({1, 3, 7, 5}, bytes, n.mean, n.std);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(std::memcmp(back->data.data(), img.data.data(),
                        img.data.size() * sizeof(float)),
            0);
}

TEST(PixelCodec, EveryPixelValueRoundTrips) {
  for (const ImageNormalization& n :
       {DefaultNormalization(1), DefaultNormalization(3)}) {
    const size_t c = n.mean.size();
    Tensor t(Shape{1, static_cast<int64_t>(c), 16, 16});
    for (size_t ch = 0; ch < c; ++ch) {
      for (unsigned u = 0; u < 256; ++u) {
        t.data[ch * 256 + u] = PixelToInput(u, n.mean[ch], n.std[ch]);
      }
    }
    std::string bytes;
    ASSERT_TRUE(EncodePixels(t, n.mean, n.std, &bytes));
    for (size_t ch = 0; ch < c; ++ch) {
      for (unsigned u = 0; u < 256; ++u) {
        EXPECT_EQ(static_cast<unsigned char>(bytes[ch * 256 + u]), u);
      }
    }
  }
}

TEST(PixelCodec, AnythingElseStaysFloat) {
  const ImageNormalization n = DefaultNormalization(3);
  Tensor img = RandomImage(Shape{1, 3, 4, 4}, 5, n);
  std::string bytes;
  Tensor off = img;
  off.data[17] = std::nextafter(off.data[17], 10.f);  // one ulp off a pixel
  EXPECT_FALSE(EncodePixels(off, n.mean, n.std, &bytes));
  Tensor big = img;
  big.data[3] = 1e6f;  // no pixel normalises to it
  EXPECT_FALSE(EncodePixels(big, n.mean, n.std, &bytes));
  // The channel statistics must fit the part.
  EXPECT_FALSE(EncodePixels(img, {0.5f}, {0.5f}, &bytes));
}

TEST(PixelCodec, MalformedMessagesAreRefused) {
  const ImageNormalization n = DefaultNormalization(3);
  EXPECT_FALSE(
      DecodePixels({1, 3, 2, 2}, std::string(11, 'x'), n.mean, n.std).ok());
  EXPECT_FALSE(
      DecodePixels({1, 2, 2, 2}, std::string(8, 'x'), n.mean, n.std).ok());
  EXPECT_FALSE(
      DecodePixels({1, 3, 2, 2}, std::string(12, 'x'), n.mean, {1.f}).ok());
}

}  // namespace
}  // namespace shoal
