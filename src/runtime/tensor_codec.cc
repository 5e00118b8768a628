#include "runtime/tensor_codec.h"

#include <lz4.h>

#include <cmath>
#include <cstring>

#include "runtime/pixel_codec.h"
#include "runtime/wire.h"

namespace shoal {

namespace {

// bfloat16: the top half of a float32, rounded to nearest even; a NaN
// stays a (quiet) NaN rather than rounding into infinity.
uint16_t ToBF16(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  if (std::isnan(v)) return static_cast<uint16_t>((b >> 16) | 0x40);
  b += 0x7FFF + ((b >> 16) & 1);
  return static_cast<uint16_t>(b >> 16);
}

float FromBF16(uint16_t h) {
  const uint32_t b = static_cast<uint32_t>(h) << 16;
  float v;
  std::memcpy(&v, &b, 4);
  return v;
}

// float16 through the compiler's half type (IEEE binary16, round to
// nearest even; F16C on x86-64, native on arm64). GCC 12 has no _Float16
// in C++ on arm64, and clang before 15 (the fuzz build's) none on x86-64;
// their __fp16 is the same IEEE format and converts alike.
#if defined(__aarch64__) || \
    (defined(__clang__) && __clang_major__ < 15 && defined(__x86_64__))
using Half = __fp16;
#else
using Half = _Float16;
#endif

uint16_t ToF16(float v) {
  const Half h = static_cast<Half>(v);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}

float FromF16(uint16_t b) {
  Half h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}

void EncodeHalves(const Tensor& t, WireDtype d, std::string* out) {
  out->resize(t.data.size() * 2);
  char* p = out->data();
  for (size_t i = 0; i < t.data.size(); ++i) {
    const uint16_t h =
        d == WireDtype::kF16 ? ToF16(t.data[i]) : ToBF16(t.data[i]);
    std::memcpy(p + 2 * i, &h, 2);  // little endian, as every target is
  }
}

}  // namespace

bool EncodeInt8Values(const Tensor& t, std::string* out) {
  for (float v : t.data) {
    if (!(v >= -128.f && v <= 127.f) || v != std::nearbyint(v)) return false;
  }
  out->resize(t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i)
    (*out)[i] = static_cast<char>(static_cast<int8_t>(t.data[i]));
  return true;
}

namespace {

StatusOr<Tensor> Int8FromBytes(const std::vector<int64_t>& shape,
                               const std::string& bytes) {
  Tensor t;
  t.shape = shape;
  t.data.resize(NumElements(shape));
  if (bytes.size() != t.data.size()) {
    return InvalidArgument("tensor message has " +
                           std::to_string(bytes.size()) + " bytes for " +
                           std::to_string(t.data.size()) + " int8 values");
  }
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = static_cast<float>(static_cast<int8_t>(bytes[i]));
  return t;
}

double ZeroFraction(const Tensor& t) {
  if (t.data.empty()) return 0;
  size_t zeros = 0;
  for (float v : t.data) zeros += v == 0.0f;
  return static_cast<double>(zeros) / static_cast<double>(t.data.size());
}

// Replaces m's data by its LZ4 block where that is smaller.
void Compress(rpc::TensorMessage* m) {
  const std::string& raw = m->data();
  if (raw.size() < 64 || raw.size() > LZ4_MAX_INPUT_SIZE) return;
  // Capacity one byte short of the input: LZ4 gives up (returns 0) as soon
  // as the block would not be smaller, so no bound-sized buffer is needed.
  std::string block(raw.size() - 1, '\0');
  const int n = LZ4_compress_default(raw.data(), block.data(),
                                     static_cast<int>(raw.size()),
                                     static_cast<int>(block.size()));
  if (n <= 0) return;
  block.resize(n);
  m->set_raw_bytes(static_cast<int64_t>(raw.size()));
  m->set_compression(rpc::TensorMessage::LZ4);
  m->set_data(std::move(block));
}

}  // namespace

void EncodeTensor(const Tensor& t, const WireSettings& wire,
                  rpc::TensorMessage* m) {
  switch (wire.dtype) {
    case WireDtype::kF16:
      m->set_encoding(rpc::TensorMessage::FLOAT16);
      EncodeHalves(t, wire.dtype, m->mutable_data());
      break;
    case WireDtype::kBF16:
      m->set_encoding(rpc::TensorMessage::BFLOAT16);
      EncodeHalves(t, wire.dtype, m->mutable_data());
      break;
    case WireDtype::kInt8:
      if (EncodeInt8Values(t, m->mutable_data())) {
        m->set_encoding(rpc::TensorMessage::INT8);
        break;
      }
      [[fallthrough]];
    default:
      m->set_encoding(rpc::TensorMessage::FLOAT32);
      TensorToBytes(t, m->mutable_data());
  }
  m->set_compression(rpc::TensorMessage::NONE);
  m->set_raw_bytes(0);
  if (wire.lz4 && ZeroFraction(t) >= kMinZeroFractionToCompress) Compress(m);
}

int64_t EncodedValueBytes(const rpc::TensorMessage& m) {
  switch (m.encoding()) {
    case rpc::TensorMessage::FLOAT32:
      return 4;
    case rpc::TensorMessage::PIXELS:
    case rpc::TensorMessage::INT8:
      return 1;
    case rpc::TensorMessage::FLOAT16:
    case rpc::TensorMessage::BFLOAT16:
      return 2;
    default:
      return 0;
  }
}

WireSize WireSizeOf(const rpc::TensorMessage& m, int64_t elements) {
  const int64_t raw = elements * EncodedValueBytes(m);
  // Compressed: smaller than the raw bytes, or it would have gone raw.
  if (m.compression() == rpc::TensorMessage::LZ4) return {raw, false};
  return {raw, true};
}

StatusOr<Tensor> TensorFromMessage(const rpc::TensorMessage& m,
                                   const std::vector<int64_t>& shape) {
  int64_t elements = 1;
  for (int64_t v : shape) elements *= v;
  const int64_t per = EncodedValueBytes(m);
  if (per == 0) {
    return InvalidArgument("tensor message in an unknown encoding " +
                           std::to_string(m.encoding()));
  }
  const std::string* bytes = &m.data();
  std::string raw;
  switch (m.compression()) {
    case rpc::TensorMessage::NONE:
      break;
    case rpc::TensorMessage::LZ4: {
      // The size is the region's, from the plan: checked before allocating.
      if (m.raw_bytes() != elements * per) {
        return InvalidArgument("compressed tensor message says it holds " +
                               std::to_string(m.raw_bytes()) +
                               " bytes; its region of " +
                               std::to_string(elements) + " values holds " +
                               std::to_string(elements * per));
      }
      if (m.data().size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) ||
          m.raw_bytes() > LZ4_MAX_INPUT_SIZE) {
        return InvalidArgument("compressed tensor message is too large");
      }
      raw.resize(m.raw_bytes());
      const int n = LZ4_decompress_safe(m.data().data(), raw.data(),
                                        static_cast<int>(m.data().size()),
                                        static_cast<int>(raw.size()));
      if (n != static_cast<int>(raw.size())) {
        return InvalidArgument(
            "compressed tensor message is corrupt (LZ4 block of " +
            std::to_string(m.data().size()) + " bytes)");
      }
      bytes = &raw;
      break;
    }
    default:
      return InvalidArgument("tensor message in an unknown compression " +
                             std::to_string(m.compression()));
  }
  switch (m.encoding()) {
    case rpc::TensorMessage::FLOAT32:
      return TensorFromBytes(shape, *bytes);
    case rpc::TensorMessage::PIXELS:
      return DecodePixels(
          shape, *bytes,
          std::vector<float>(m.pixel_mean().begin(), m.pixel_mean().end()),
          std::vector<float>(m.pixel_std().begin(), m.pixel_std().end()));
    case rpc::TensorMessage::INT8:
      return Int8FromBytes(shape, *bytes);
    default:
      break;
  }
  if (static_cast<int64_t>(bytes->size()) != elements * 2) {
    return InvalidArgument("tensor message has " +
                           std::to_string(bytes->size()) + " bytes for " +
                           std::to_string(elements) + " 2-byte values");
  }
  Tensor t;
  t.shape = shape;
  t.data.resize(elements);
  const bool f16 = m.encoding() == rpc::TensorMessage::FLOAT16;
  for (int64_t i = 0; i < elements; ++i) {
    uint16_t h;
    std::memcpy(&h, bytes->data() + 2 * i, 2);
    t.data[i] = f16 ? FromF16(h) : FromBF16(h);
  }
  return t;
}

void RoundToWireDtype(WireDtype d, Tensor* t) {
  // int8 carries integers exactly (and anything else as float32).
  if (d == WireDtype::kF32 || d == WireDtype::kInt8) return;
  for (float& v : t->data) {
    v = d == WireDtype::kF16 ? FromF16(ToF16(v)) : FromBF16(ToBF16(v));
  }
}

}  // namespace shoal
