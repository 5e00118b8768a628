#include "util/content_hash.h"

#include <cstdio>
#include <cstring>

namespace shoal {

void ContentHasher::Word(uint64_t w) {
  a_ = (a_ ^ w) * 0x100000001b3ull;
  b_ = (b_ ^ (w + 0x9e3779b97f4a7c15ull)) * 0x100000001b3ull;
  b_ ^= b_ >> 29;
}

void ContentHasher::Add(const void* p, size_t n) {
  const auto* c = static_cast<const unsigned char*>(p);
  size_t i = 0;
  // Top up a word left over from the last call first: the hash of data
  // added in pieces equals the hash of it added at once.
  while (tail_n_ > 0 && tail_n_ < 8 && i < n) tail_[tail_n_++] = c[i++];
  if (tail_n_ == 8) {
    uint64_t w;
    std::memcpy(&w, tail_, 8);
    Word(w);
    tail_n_ = 0;
  }
  // Word at a time: weights are hundreds of MB.
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, c + i, 8);
    Word(w);
  }
  while (i < n) tail_[tail_n_++] = c[i++];
}

std::string ContentHasher::Hex() const {
  uint64_t a = a_, b = b_;
  for (int i = 0; i < tail_n_; ++i) {
    a = (a ^ tail_[i]) * 0x100000001b3ull;
    b = (b ^ (tail_[i] + 0x9eu)) * 0x100000001b3ull;
  }
  char buf[33];
  std::snprintf(buf, sizeof(buf), "%016llx%016llx",
                static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
  return buf;
}

}  // namespace shoal
