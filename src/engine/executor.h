// Runs a graph (or a fragment of one) on the local CPU.
#ifndef SHOAL_ENGINE_EXECUTOR_H_
#define SHOAL_ENGINE_EXECUTOR_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/int8_path.h"
#include "graph/graph.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// oneDNN (x86's JIT kernels), XNNPACK (NEON kernels on arm64; SSE/AVX on
// amd64, where its tests run), or the reference kernels (the oracle).
enum class Backend { kOneDnn, kReference, kXnnpack };

// What a device computes on unless told otherwise: on arm64 XNNPACK, since
// Debian's oneDNN has only its reference loops for a board's cores
// (docs/engine.md); oneDNN's JIT kernels elsewhere.
#if defined(__aarch64__)
inline constexpr Backend kDefaultBackend = Backend::kXnnpack;
#else
inline constexpr Backend kDefaultBackend = Backend::kOneDnn;
#endif

StatusOr<Backend> ParseBackend(const std::string& name);
const char* BackendName(Backend b);

class SharedArena;    // engine/shared_arena.h
class SharedWeights;  // engine/shared_weights.h

struct ExecutorOptions {
  Backend backend = kDefaultBackend;
  int threads = 0;  // 0: all cores (oneDNN's OpenMP, XNNPACK's pool)
  // Reordered weights this executor shares with others of the process:
  // a weight that `weight_keys` names (weight tensor -> what its data is,
  // e.g. a blob hash) reuses another executor's copy of the same data in
  // the same layout. Null: the executor keeps copies of its own.
  std::shared_ptr<SharedWeights> shared_weights;
  std::map<std::string, std::string> weight_keys;
  // Activations and oneDNN scratchpad in this arena, which the executor
  // shares with others that never run at the same time as it (null: its
  // own).
  std::shared_ptr<SharedArena> shared_arena;
  // How quantized layers compute on oneDNN (engine/int8_path.h): kAuto
  // takes this CPU's exact path; tests force either on any CPU.
  Int8Path int8_path = Int8Path::kAuto;
};

struct ExecutorStats {
  int64_t arena_bytes = 0;      // activation arena it needs (allocated,
                                // or its part of a SharedArena)
  int64_t peak_live_bytes = 0;  // largest sum of live activation bytes
  int steps = 0;
  int onednn_steps = 0;
  int xnnpack_steps = 0;
  int reference_steps = 0;
  int reorder_steps = 0;
  // Plain weight bytes still held after load: only what reference steps
  // read (oneDNN steps hold their own copies in their chosen layouts).
  int64_t retained_weight_bytes = 0;
  // Weight bytes the oneDNN steps hold, in the layouts and types their
  // primitives chose (s8 for int8 layers: a quarter of f32); copies taken
  // from another executor (ExecutorOptions::shared_weights) not counted.
  int64_t onednn_weight_bytes = 0;
  // Weight bytes the XNNPACK steps' operators hold (packed: about the
  // plain size) and the constants their binary operators read; operators
  // taken from another executor not counted.
  int64_t xnnpack_weight_bytes = 0;
  int shared_weights = 0;     // weights taken from another executor's copy
  int folded_batchnorms = 0;  // BN nodes folded into their conv (oneDNN)
  // Quantized layers (Q/DQ patterns run on int8 values), on either
  // backend; each XNNPACK layer names its path in its step's impl ("qc8",
  // "f32-sums"). int8_path is the oneDNN layers' path (kAuto while oneDNN
  // runs none).
  int int8_layers = 0;
  Int8Path int8_path = Int8Path::kAuto;
};

class Executor {
 public:
  // Compiles `g` (shaped) with `weights` (moved in: kernels keep what they
  // need, reordered once, and drop the rest).
  static StatusOr<std::unique_ptr<Executor>> Create(
      const Graph& g, WeightStore weights, const ExecutorOptions& opts);
  ~Executor();

  // How a step's time is measured. Process CPU time is what `shoal
  // profile` attributes to the nodes in context (under a CPU quota a step's
  // wall time includes throttling earned by earlier steps); wall time is
  // what a user waiting on one unthrottled run sees, and does not count
  // OpenMP threads spinning between parallel regions.
  enum class StepClock { kProcessCpu, kWall };

  // Inputs in graph input order, plain row-major; outputs likewise. With
  // `step_seconds` (one per step_labels() entry), adds each step's time on
  // `clock` to it.
  Status Run(const std::vector<Tensor>& inputs, std::vector<Tensor>* outputs,
             std::vector<double>* step_seconds = nullptr,
             StepClock clock = StepClock::kProcessCpu);

  const ExecutorStats& stats() const { return stats_; }
  const std::vector<std::string>& step_labels() const { return labels_; }
  // Per step: true where the reference kernel runs it.
  const std::vector<bool>& step_is_reference() const { return reference_; }
  // Per step: the kernel that runs it ("onednn", "xnnpack", "reference").
  const std::vector<std::string>& step_kernels() const { return kernels_; }
  // Per step: the implementation it took (Step::impl: oneDNN's name, or an
  // XNNPACK quantized layer's path), else "".
  const std::vector<std::string>& step_impls() const { return impls_; }

 private:
  struct Impl;
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
  ExecutorStats stats_;
  std::vector<std::string> labels_;
  std::vector<bool> reference_;
  std::vector<std::string> kernels_;
  std::vector<std::string> impls_;
};

// Sets the thread count of oneDNN's kernels (OpenMP); 0 means all cores.
void SetKernelThreads(int threads);
int KernelThreads();

}  // namespace shoal

#endif  // SHOAL_ENGINE_EXECUTOR_H_
