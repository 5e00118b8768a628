#include "io/image.h"

#include <stb/stb_image.h>
#include <stb/stb_image_resize.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace shoal {

namespace {

// The largest image decoded: stb_image takes any size its header states (up
// to 2^24 a side) and allocates it before reading a pixel, so a 100-byte
// file could ask for gigabytes. 2^26 pixels is a 64-megapixel photo.
constexpr int64_t kMaxImagePixels = int64_t{1} << 26;
// And the memory its decoding may take, estimated from the header before
// stb allocates: a 26-byte progressive CMYK JPEG claiming 8k x 8k made it
// take 1 GiB, a 16-bit RGBA PNG as much. 384 MiB: a 40-megapixel RGB
// photo.
constexpr int64_t kMaxDecodeBytes = int64_t{384} << 20;
// The largest image file read (a camera's raw JPEG is a few tens of MB).
constexpr int64_t kMaxImageFileBytes = int64_t{256} << 20;

// What stb_image holds at its peak decoding `bytes` (iw x ih, ic channels
// in the file) into `c` channels: the decoded samples, twice over where it
// converts them (16-bit samples to 8, channels to `c`), and for a
// progressive JPEG its 16-bit coefficients of every component as well.
int64_t DecodeBytes(const std::string& bytes, bool jpeg, int64_t iw, int64_t ih,
                    int ic, int c) {
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int64_t pixels = iw * ih;
  const int64_t sample =
      stbi_is_16_bit_from_memory(data, static_cast<int>(bytes.size())) ? 2 : 1;
  int64_t total = pixels * ic * sample * 2 + pixels * c;
  // SOF2 (progressive) is a marker; entropy-coded data stuffs every 0xFF
  // with a 0x00, so the pair appears nowhere else.
  if (jpeg && bytes.find("\xFF\xC2") != std::string::npos)
    total += pixels * ic * 2;
  return total;
}

// A BMP's pixel data, within the bytes present. stb_image reads only
// uncompressed BMPs (BI_RGB and BI_BITFIELDS), whose rows are stored whole:
// padded to 4 bytes, |height| of them after the header's data offset. A
// file shorter than that cannot hold the image it states, and stb would
// decode it anyway, filling the rows it lacks: a 54-byte file stating 5 x
// 8.4 M pixels took seconds of decoding and resizing (found by fuzz_image).
Status CheckBmpData(const std::string& bytes, const std::string& origin) {
  auto le = [&](size_t at, int n) {
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i)
      v = (v << 8) | static_cast<unsigned char>(bytes[at + i]);
    return v;
  };
  // The file header (14 bytes), then the info header's size, width,
  // height (negative: top-down), planes, bits per pixel and compression.
  if (bytes.size() < 14 + 20) return Status::Ok();  // stb refuses it
  const uint64_t header = le(14, 4);
  if (header < 40) return Status::Ok();  // OS/2 headers: stb checks them
  const uint64_t offset = le(10, 4);
  const int64_t width = static_cast<int32_t>(le(18, 4));
  const int64_t height = static_cast<int32_t>(le(22, 4));
  const uint64_t bpp = le(28, 2);
  const uint64_t compression = le(30, 4);
  if (compression != 0 && compression != 3) return Status::Ok();
  if (width < 1 || height == 0 || bpp == 0) return Status::Ok();
  const uint64_t row = (bpp * static_cast<uint64_t>(width) + 31) / 32 * 4;
  const uint64_t rows = static_cast<uint64_t>(height < 0 ? -height : height);
  // The last row's padding may be missing (stb reads none past the data).
  const uint64_t need =
      offset + row * (rows - 1) + (bpp * static_cast<uint64_t>(width) + 7) / 8;
  if (need > bytes.size()) {
    return InvalidArgument("image '" + origin + "' is a BMP of " +
                           std::to_string(width) + "x" + std::to_string(rows) +
                           " pixels, " + std::to_string(need) +
                           " bytes with its header, but the file holds " +
                           std::to_string(bytes.size()));
  }
  return Status::Ok();
}

// A PNG's chunks, each within the bytes present. Debian's stb_image grows
// its buffer to an IDAT chunk's stated length before reading it, so a
// 100-byte file stating a 1.5 GB chunk made it allocate 1.5 GB (found by
// fuzz_image); checked here, no chunk asks for more than the file holds.
Status CheckPngChunks(const std::string& bytes, const std::string& origin) {
  auto be32 = [&](size_t at) {
    return (uint32_t{static_cast<unsigned char>(bytes[at])} << 24) |
           (uint32_t{static_cast<unsigned char>(bytes[at + 1])} << 16) |
           (uint32_t{static_cast<unsigned char>(bytes[at + 2])} << 8) |
           uint32_t{static_cast<unsigned char>(bytes[at + 3])};
  };
  size_t at = 8;  // the signature
  while (at + 8 <= bytes.size()) {
    const uint64_t length = be32(at);
    const std::string type = bytes.substr(at + 4, 4);
    // Length, type, data and CRC.
    if (length + 12 > bytes.size() - at) {
      return InvalidArgument(
          "cannot read image '" + origin + "': its PNG chunk at byte " +
          std::to_string(at) + " states " + std::to_string(length) +
          " bytes of data, but only " + std::to_string(bytes.size() - at) +
          " bytes are left from there (truncated or "
          "corrupt)");
    }
    at += 12 + length;
    if (type == "IEND") return Status::Ok();
  }
  return InvalidArgument("cannot read image '" + origin +
                         "': its PNG data ends without an IEND chunk "
                         "(truncated)");
}

}  // namespace

StatusOr<Tensor> LoadImage(const std::string& path, const Shape& shape,
                           const ImageNormalization& norm) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return NotFound("cannot read image '" + path + "': cannot open it");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return InvalidArgument("cannot read image '" + path +
                           "': not a regular file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec || size > static_cast<uint64_t>(kMaxImageFileBytes)) {
    return InvalidArgument("image '" + path + "' is over " +
                           std::to_string(kMaxImageFileBytes >> 20) +
                           " MiB, the largest file --image reads");
  }
  std::ostringstream bytes;
  bytes << f.rdbuf();
  if (!f && !f.eof()) {
    return InvalidArgument("cannot read image '" + path + "': read error");
  }
  return DecodeImage(bytes.str(), path, shape, norm);
}

StatusOr<Tensor> DecodeImage(const std::string& bytes,
                             const std::string& origin, const Shape& shape,
                             const ImageNormalization& norm) {
  if (shape.size() != 4 || shape[0] != 1 || (shape[1] != 1 && shape[1] != 3)) {
    return InvalidArgument(
        "images feed models with a 1xCxHxW input, C = 1 or 3; this "
        "model's input is " +
        ShapeToString(shape));
  }
  if (shape[2] < 1 || shape[3] < 1 || shape[2] * shape[3] > kMaxImagePixels) {
    return InvalidArgument("a model input of " + ShapeToString(shape) +
                           " is no image size");
  }
  const int c = static_cast<int>(shape[1]);
  const int h = static_cast<int>(shape[2]), w = static_cast<int>(shape[3]);
  if (norm.mean.size() != static_cast<size_t>(c) ||
      norm.std.size() != static_cast<size_t>(c)) {
    return InvalidArgument("--mean and --std need " + std::to_string(c) +
                           " values each");
  }
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return InvalidArgument("image '" + origin + "' is over 2 GiB");
  }
  // PNG, JPEG and BMP only: Debian's stb reads past a buffer on a 16-bit
  // PNM that ends early (found by fuzz_image), and a camera's image is one
  // of these three; stb's other decoders are not offered to a file either.
  const bool png = bytes.rfind("\x89PNG", 0) == 0;
  const bool jpeg = bytes.rfind("\xFF\xD8", 0) == 0;
  const bool bmp = bytes.rfind("BM", 0) == 0;
  if (!png && !jpeg && !bmp) {
    return InvalidArgument("cannot read image '" + origin +
                           "': not a PNG, JPEG or BMP file");
  }
  if (png) RETURN_IF_ERROR(CheckPngChunks(bytes, origin));
  if (bmp) RETURN_IF_ERROR(CheckBmpData(bytes, origin));
  const auto* data = reinterpret_cast<const stbi_uc*>(bytes.data());
  const int len = static_cast<int>(bytes.size());
  int iw = 0, ih = 0, ic = 0;
  if (!stbi_info_from_memory(data, len, &iw, &ih, &ic)) {
    return InvalidArgument("cannot read image '" + origin +
                           "': " + stbi_failure_reason());
  }
  if (iw < 1 || ih < 1 || int64_t{iw} * ih > kMaxImagePixels) {
    return InvalidArgument("image '" + origin + "' is " + std::to_string(iw) +
                           "x" + std::to_string(ih) +
                           " pixels; at most 2^26 pixels are read");
  }
  const int64_t need = DecodeBytes(bytes, jpeg, iw, ih, ic, c);
  if (need > kMaxDecodeBytes) {
    return InvalidArgument(
        "image '" + origin + "' (" + std::to_string(iw) + "x" +
        std::to_string(ih) + ", " + std::to_string(ic) +
        " channels) would take about " + std::to_string(need >> 20) +
        " MiB to decode; at most " + std::to_string(kMaxDecodeBytes >> 20) +
        " MiB is spent on an image (scale it down first)");
  }
  std::unique_ptr<unsigned char, void (*)(void*)> pixels(
      stbi_load_from_memory(data, len, &iw, &ih, &ic, c), stbi_image_free);
  if (!pixels) {
    return InvalidArgument("cannot read image '" + origin +
                           "': " + stbi_failure_reason());
  }
  std::vector<unsigned char> resized(static_cast<size_t>(w) * h * c);
  if (iw == w && ih == h) {
    // Already the model's size: stb's resize would still filter it (its
    // Mitchell kernel at scale 1 blurs), so the pixels go in as they are.
    std::copy(pixels.get(), pixels.get() + resized.size(), resized.begin());
  } else if (!stbir_resize_uint8(pixels.get(), iw, ih, 0, resized.data(), w, h,
                                 0, c)) {
    return Internal("resizing '" + origin + "' failed");
  }
  Tensor t(shape);
  for (int ch = 0; ch < c; ++ch)
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        t.data[(static_cast<size_t>(ch) * h + y) * w + x] =
            PixelToInput(resized[(static_cast<size_t>(y) * w + x) * c + ch],
                         norm.mean[ch], norm.std[ch]);
      }
  return t;
}

}  // namespace shoal
