// libFuzzer target: bytes -> .npy parse (header, shape against the bytes
// present, float32 data).
#include <cstddef>
#include <cstdint>
#include <string>

#include "io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  (void)shoal::ParseNpy(bytes, "fuzz.npy");
  return 0;
}
