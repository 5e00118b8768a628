#include "engine/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace shoal {
namespace {

void ExpectNoConflicts(const std::vector<BufferLifetime>& b,
                       const MemoryPlan& p) {
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(p.offsets[i] % kBufferAlignment, 0);
    EXPECT_LE(p.offsets[i] + b[i].bytes, p.arena_bytes);
    for (size_t j = i + 1; j < b.size(); ++j) {
      bool live_together = b[i].first <= b[j].last && b[j].first <= b[i].last;
      bool bytes_overlap = p.offsets[i] < p.offsets[j] + b[j].bytes &&
                           p.offsets[j] < p.offsets[i] + b[i].bytes;
      EXPECT_FALSE(live_together && bytes_overlap) << i << " vs " << j;
    }
  }
}

TEST(MemoryPlanTest, ChainReusesBuffers) {
  // a -> b -> c -> d, each 1 KiB: at most two alive at once.
  std::vector<BufferLifetime> b = {
      {1024, 0, 1}, {1024, 1, 2}, {1024, 2, 3}, {1024, 3, 3}};
  MemoryPlan p = PlanMemory(b);
  ExpectNoConflicts(b, p);
  EXPECT_EQ(p.arena_bytes, 2048);
  EXPECT_EQ(p.peak_live_bytes, 2048);
}

TEST(MemoryPlanTest, RandomLifetimesNeverConflict) {
  std::mt19937 rng(42);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<BufferLifetime> b;
    for (int i = 0; i < 40; ++i) {
      int first = rng() % 30;
      b.push_back({1 + static_cast<int64_t>(rng() % 5000), first,
                   first + static_cast<int>(rng() % 6)});
    }
    MemoryPlan p = PlanMemory(b);
    ExpectNoConflicts(b, p);
    EXPECT_GE(p.arena_bytes, p.peak_live_bytes);
  }
}

}  // namespace
}  // namespace shoal
