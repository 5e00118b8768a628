// One activation arena and one oneDNN scratchpad for executors that never
// run at once. An executor plans its activations into an arena of its own
// and keeps it between runs, though Run copies its inputs in and its
// outputs out, so nothing in it outlives a run. A worker runs a plan's
// tasks one at a time on its compute thread, and a spatial plan gives it
// dozens (each layer's interior and edges): it held the sum of their
// arenas where the largest would do, as its memory budget counts.
// Executors given the same SharedArena take the largest of their needs
// between them. (An executor given none makes one of its own.)
#ifndef SHOAL_ENGINE_SHARED_ARENA_H_
#define SHOAL_ENGINE_SHARED_ARENA_H_

#include <cstdint>
#include <mutex>

namespace shoal {

class SharedArena {
 public:
  SharedArena() = default;
  ~SharedArena();
  SharedArena(const SharedArena&) = delete;
  SharedArena& operator=(const SharedArena&) = delete;

  // Grows the buffers to at least these sizes (64-byte aligned). An
  // executor bound to smaller ones binds again before its next run
  // (generation() tells it). False when memory ran out.
  bool Reserve(int64_t arena_bytes, int64_t scratchpad_bytes);

  char* arena() const { return arena_; }
  char* scratchpad() const { return scratchpad_; }
  int64_t arena_bytes() const { return arena_bytes_; }
  int64_t scratchpad_bytes() const { return scratchpad_bytes_; }
  // Changes whenever a buffer moves.
  int64_t generation() const { return generation_; }

 private:
  std::mutex mu_;
  char* arena_ = nullptr;
  char* scratchpad_ = nullptr;
  int64_t arena_bytes_ = 0, scratchpad_bytes_ = 0;
  int64_t generation_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_ENGINE_SHARED_ARENA_H_
