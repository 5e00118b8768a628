#include "io/image.h"

#include <gtest/gtest.h>

#include <string>

namespace shoal {
namespace {

// A 2x1 gray PNG: pixels 0x10 and 0xf0.
const std::string kPng(
    "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00"
    "\x00\x02\x00\x00\x00\x01\x08\x00\x00\x00\x00\xd1\x49\x20\x56\x00\x00\x00"
    "\x0b\x49\x44\x41\x54\x78\x9c\x63\x10\xf8\x00\x00\x01\x13\x01\x01\x75\x5b"
    "\x66\xfc\x00\x00\x00\x00\x49\x45\x4e\x44\xae\x42\x60\x82",
    68);

TEST(DecodeImage, ReadsAPng) {
  auto t = DecodeImage(kPng, "two.png", {1, 1, 1, 2}, DefaultNormalization(1));
  ASSERT_TRUE(t.ok()) << t.status().message();
  // (p / 255 - 0.5) / 0.5 of each pixel: at the model's size the pixels go
  // in unfiltered (stb's resize would mix the two a little even at scale 1).
  ASSERT_EQ(t->data.size(), 2u);
  EXPECT_EQ(t->data[0], PixelToInput(0x10, 0.5f, 0.5f));
  EXPECT_EQ(t->data[1], PixelToInput(0xf0, 0.5f, 0.5f));
}

// Another size is resampled: the 2x1 image as 4x1, dark to light.
TEST(DecodeImage, ResizesToTheModelsSize) {
  auto t = DecodeImage(kPng, "two.png", {1, 1, 1, 4}, DefaultNormalization(1));
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->data.size(), 4u);
  EXPECT_LT(t->data[0], -0.5);
  EXPECT_GT(t->data[3], 0.5);
}

// What fuzz_image found: a 5x3 PNG whose IDAT chunk states 1.5 GB made
// stb_image allocate that much before reading it. Refused from the chunk
// table, naming the file; so is a PNG cut short.
TEST(DecodeImage, PngChunksMustFitTheFile) {
  std::string huge = kPng;
  huge.replace(33, 4, "\x5d\x00\x9a\x19", 4);  // the IDAT length
  auto h = DecodeImage(huge, "huge.png", {1, 1, 1, 2}, DefaultNormalization(1));
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("huge.png"), std::string::npos);
  EXPECT_NE(h.status().message().find("states 1560320537 bytes"),
            std::string::npos)
      << h.status().message();
  auto cut = DecodeImage(kPng.substr(0, 60), "cut.png", {1, 1, 1, 2},
                         DefaultNormalization(1));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("truncated"), std::string::npos)
      << cut.status().message();
}

// Headers that claim what would take gigabytes to decode are refused from
// the header, before stb allocates: a progressive JPEG of 8192 x 8192 (24
// bytes; stb kept every component's coefficients, 1 GiB) and a 16-bit
// RGBA PNG of 8192 x 4096 (1 GiB).
TEST(DecodeImage, HeadersClaimingGigabytesAreRefusedBeforeDecoding) {
  std::string jpeg(
      "\xFF\xD8\xFF\xC2\x00\x11\x08\x20\x00\x20\x00\x03"
      "\x01\x11\x00\x02\x11\x00\x03\x11\x00",
      21);
  auto j =
      DecodeImage(jpeg, "big.jpg", {1, 3, 224, 224}, DefaultNormalization(3));
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("MiB to decode"), std::string::npos)
      << j.status().message();
  EXPECT_NE(j.status().message().find("big.jpg"), std::string::npos);
  auto be32 = [](uint32_t v) {
    return std::string{static_cast<char>(v >> 24), static_cast<char>(v >> 16),
                       static_cast<char>(v >> 8), static_cast<char>(v)};
  };
  std::string png("\x89PNG\r\n\x1a\n", 8);
  png += be32(13) + "IHDR" + be32(8192) + be32(4096);
  png += std::string("\x10\x06\x00\x00\x00", 5) + be32(0);
  png += be32(0) + "IEND" + be32(0);
  auto p =
      DecodeImage(png, "deep.png", {1, 3, 224, 224}, DefaultNormalization(3));
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("MiB to decode"), std::string::npos)
      << p.status().message();
}

// A 2x2 24-bit BMP (bottom-up rows of 6 bytes padded to 8); its header
// states the rows, so a file cut short is refused before stb decodes it.
// What fuzz_image found: 54 bytes stating 5 x 8388611 pixels, which stb
// decoded (filling the rows it lacked) and resized for seconds.
std::string Bmp(int32_t width, int32_t height, size_t data_bytes) {
  auto le32 = [](uint32_t v) {
    return std::string{static_cast<char>(v), static_cast<char>(v >> 8),
                       static_cast<char>(v >> 16), static_cast<char>(v >> 24)};
  };
  std::string b = "BM" + le32(54 + data_bytes) + le32(0) + le32(54);
  b += le32(40) + le32(width) + le32(height) +
       std::string("\x01\x00\x18\x00", 4);
  b += le32(0) + le32(data_bytes) + le32(2835) + le32(2835) + le32(0) + le32(0);
  return b + std::string(data_bytes, '\x80');
}

TEST(DecodeImage, BmpRowsMustFitTheFile) {
  auto ok = DecodeImage(Bmp(2, 2, 16), "two.bmp", {1, 3, 2, 2},
                        DefaultNormalization(3));
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  // The last row's padding may be left out; its pixels may not.
  auto unpadded = DecodeImage(Bmp(2, 2, 14), "unpadded.bmp", {1, 3, 2, 2},
                              DefaultNormalization(3));
  ASSERT_TRUE(unpadded.ok()) << unpadded.status().message();
  auto cut = DecodeImage(Bmp(2, 2, 13), "cut.bmp", {1, 3, 2, 2},
                         DefaultNormalization(3));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("cut.bmp"), std::string::npos);
  EXPECT_NE(cut.status().message().find("the file holds 67"), std::string::npos)
      << cut.status().message();
  auto tall = DecodeImage(Bmp(5, 8388611, 0), "tall.bmp", {1, 3, 224, 224},
                          DefaultNormalization(3));
  ASSERT_FALSE(tall.ok());
  EXPECT_NE(tall.status().message().find("5x8388611"), std::string::npos)
      << tall.status().message();
}

}  // namespace
}  // namespace shoal
