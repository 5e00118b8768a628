#include "engine/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace shoal {
namespace {
int64_t AlignUp(int64_t v) {
  return (v + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}
bool Overlap(const BufferLifetime& a, const BufferLifetime& b) {
  return a.first <= b.last && b.first <= a.last;
}
}  // namespace

MemoryPlan PlanMemory(const std::vector<BufferLifetime>& buffers) {
  const size_t n = buffers.size();
  MemoryPlan plan;
  plan.offsets.assign(n, 0);
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });
  std::vector<size_t> placed;
  for (size_t i : order) {
    const int64_t size = AlignUp(buffers[i].bytes);
    // Intervals already taken by buffers alive at the same time.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed) {
      if (Overlap(buffers[i], buffers[j])) {
        taken.emplace_back(plan.offsets[j],
                           plan.offsets[j] + AlignUp(buffers[j].bytes));
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto& [lo, hi] : taken) {
      if (offset + size <= lo) break;
      offset = std::max(offset, hi);
    }
    plan.offsets[i] = offset;
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
    placed.push_back(i);
  }
  int max_step = 0;
  for (const auto& b : buffers) max_step = std::max(max_step, b.last);
  for (int s = 0; s <= max_step; ++s) {
    int64_t live = 0;
    for (const auto& b : buffers)
      if (b.first <= s && s <= b.last) live += b.bytes;
    plan.peak_live_bytes = std::max(plan.peak_live_bytes, live);
  }
  return plan;
}

}  // namespace shoal
