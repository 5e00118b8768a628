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
  // (p / 255 - 0.5) / 0.5, after stb's resampling filter (which mixes the
  // two pixels a little even at the same size): dark, then light.
  ASSERT_EQ(t->data.size(), 2u);
  EXPECT_LT(t->data[0], -0.7);
  EXPECT_GT(t->data[1], 0.7);
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

}  // namespace
}  // namespace shoal
