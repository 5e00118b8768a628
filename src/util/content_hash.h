// A 128-bit content hash (two FNV-1a 64 lanes) as 32 hex digits: names
// weight blobs and deployments. Not a cryptographic hash: it finds
// corruption and identical content, not a forger.
#ifndef SHOAL_UTIL_CONTENT_HASH_H_
#define SHOAL_UTIL_CONTENT_HASH_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace shoal {

// Data added in any number of pieces hashes as if added at once (a blob as
// its chunks arrive, or as it is read back from disk).
class ContentHasher {
 public:
  void Add(const void* p, size_t n);
  std::string Hex() const;

 private:
  void Word(uint64_t w);
  uint64_t a_ = 0xcbf29ce484222325ull, b_ = 0x84222325cbf29ce4ull;
  unsigned char tail_[8] = {0};
  int tail_n_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_UTIL_CONTENT_HASH_H_
