// Static placement of activation buffers in one arena by liveness: buffers
// whose lifetimes do not overlap may share bytes. Greedy by size (largest
// first, lowest offset that fits), as TFLite's arena planner does.
#ifndef SHOAL_ENGINE_MEMORY_PLAN_H_
#define SHOAL_ENGINE_MEMORY_PLAN_H_

#include <cstdint>
#include <vector>

namespace shoal {

struct BufferLifetime {
  int64_t bytes = 0;
  int first = 0;  // first step that writes it
  int last = 0;   // last step that reads it (inclusive)
};

struct MemoryPlan {
  std::vector<int64_t> offsets;  // per buffer, in bytes, aligned
  int64_t arena_bytes = 0;
  // Largest sum of live bytes at any step: the lower bound any plan meets.
  int64_t peak_live_bytes = 0;
};

constexpr int64_t kBufferAlignment = 64;

MemoryPlan PlanMemory(const std::vector<BufferLifetime>& buffers);

}  // namespace shoal

#endif  // SHOAL_ENGINE_MEMORY_PLAN_H_
