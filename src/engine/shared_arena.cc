#include "engine/shared_arena.h"

#include <algorithm>
#include <cstdlib>

#include "engine/memory_plan.h"

namespace shoal {
namespace {

// A buffer of at least `bytes` (at least one alignment unit), aligned.
char* Aligned(int64_t bytes) {
  const int64_t n = (std::max<int64_t>(bytes, 1) + kBufferAlignment - 1) /
                    kBufferAlignment * kBufferAlignment;
  return static_cast<char*>(std::aligned_alloc(kBufferAlignment, n));
}

}  // namespace

SharedArena::~SharedArena() {
  std::free(arena_);
  std::free(scratchpad_);
}

bool SharedArena::Reserve(int64_t arena_bytes, int64_t scratchpad_bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  if (arena_bytes > arena_bytes_ || arena_ == nullptr) {
    char* a = Aligned(arena_bytes);
    if (a == nullptr) return false;
    std::free(arena_);
    arena_ = a;
    arena_bytes_ = std::max(arena_bytes_, arena_bytes);
    ++generation_;
  }
  if (scratchpad_bytes > scratchpad_bytes_) {
    char* s = Aligned(scratchpad_bytes);
    if (s == nullptr) return false;
    std::free(scratchpad_);
    scratchpad_ = s;
    scratchpad_bytes_ = scratchpad_bytes;
    ++generation_;
  }
  return true;
}

}  // namespace shoal
