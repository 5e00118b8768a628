#include "runtime/process_setup.h"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace shoal {
namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SHOAL_OWN_MALLOC 1  // the sanitizer's allocator, not glibc's
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SHOAL_OWN_MALLOC 1
#endif

#if defined(__GLIBC__) && !defined(SHOAL_OWN_MALLOC)
// Whether glibc mapped the block at `p` for it alone: the IS_MMAPPED bit
// of the size word before it (glibc's chunk header; mallinfo2's count of
// mapped blocks stays 0 on Debian's 2.36).
[[gnu::noinline]] bool Mapped(const void* p) {
  size_t size_word = 0;
  const uintptr_t header = reinterpret_cast<uintptr_t>(p) - sizeof(size_t);
  std::memcpy(&size_word, reinterpret_cast<const void*>(header),
              sizeof(size_word));
  return (size_word & 2) != 0;
}

// A block of `bytes`, written so that its pages are resident.
void* Touched(size_t bytes) {
  void* p = std::malloc(bytes);
  if (p != nullptr) std::memset(p, 1, bytes);
  return p;
}

// After a large block is freed glibc would take the next 2 MiB block from a
// heap, which keeps it when it is freed; set, the threshold stays where
// MapLargeAllocations put it.
TEST(ProcessSetup, LargeBlocksAreMappedEvenAfterALargerOneWasFreed) {
  MapLargeAllocations();
  void* large = Touched(24 << 20);  // would raise glibc's threshold to 24 MiB
  ASSERT_NE(large, nullptr);
  EXPECT_TRUE(Mapped(large));
  std::free(large);
  void* block = Touched(2 << 20);
  ASSERT_NE(block, nullptr);
  EXPECT_TRUE(Mapped(block));
  std::free(block);
  // Below the threshold, the heap as before.
  void* small = Touched(kMapLargeAllocationBytes / 4);
  ASSERT_NE(small, nullptr);
  EXPECT_FALSE(Mapped(small));
  std::free(small);
}
#endif

}  // namespace
}  // namespace shoal
