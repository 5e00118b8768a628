// libFuzzer target: bytes -> image decode (stb_image: PNG, JPEG, BMP, GIF,
// PNM...) -> resized, normalised model input, as `infer --image` does.
// SHOAL_FUZZ_WRITE_SEEDS=DIR writes small images of each format to DIR.
#include <stb/stb_image_write.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "io/image.h"

namespace {

void Collect(void* out, void* data, int size) {
  static_cast<std::string*>(out)->append(static_cast<const char*>(data), size);
}

void WriteSeeds(const std::string& dir) {
  for (int c : {1, 3, 4}) {
    const int w = 5, h = 3;
    std::vector<unsigned char> px(w * h * c);
    for (size_t i = 0; i < px.size(); ++i) px[i] = (i * 37) & 0xff;
    const std::string n = std::to_string(c);
    std::string png, bmp, tga, jpg;
    stbi_write_png_to_func(Collect, &png, w, h, c, px.data(), w * c);
    stbi_write_bmp_to_func(Collect, &bmp, w, h, c, px.data());
    stbi_write_tga_to_func(Collect, &tga, w, h, c, px.data());
    stbi_write_jpg_to_func(Collect, &jpg, w, h, c, px.data(), 80);
    std::ofstream(dir + "/c" + n + ".png", std::ios::binary) << png;
    std::ofstream(dir + "/c" + n + ".bmp", std::ios::binary) << bmp;
    std::ofstream(dir + "/c" + n + ".tga", std::ios::binary) << tga;
    std::ofstream(dir + "/c" + n + ".jpg", std::ios::binary) << jpg;
  }
  // Netpbm, written by hand (stb writes none).
  std::ofstream(dir + "/c3.ppm", std::ios::binary)
      << "P6\n2 2\n255\n"
      << std::string("\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0", 12);
  std::ofstream(dir + "/c1.pgm", std::ios::binary) << "P5\n2 1\n255\n\x01\xfe";
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("SHOAL_FUZZ_WRITE_SEEDS")) {
    WriteSeeds(dir);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  // ImageNet's statistics (the defaults), a small RGB input.
  (void)shoal::DecodeImage(bytes, "fuzz.img", {1, 3, 16, 16},
                           shoal::ImageNormalization{});
  return 0;
}
