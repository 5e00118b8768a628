// What `shoal kernels --dtype int8 --check N` (and `shoal-worker kernels`
// on a board, or under qemu) adds to the kernel list: the model quantized
// as the int8 tests quantize it, and its run on the chosen backend against
// the reference kernels', whole and layer by layer. The board's own
// build answers, so XNNPACK's NEON int8 kernels are checked where they run.
#ifndef SHOAL_CLI_KERNELS_CHECK_H_
#define SHOAL_CLI_KERNELS_CHECK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "engine/executor.h"
#include "engine/node_kernels.h"
#include "graph/weights.h"
#include "util/status.h"

namespace shoal {

// `n` inputs of `shape`, seeded, uniform in [0, 1] (an image's range).
std::vector<Tensor> UniformSamples(const Shape& shape, int n, uint64_t seed);

// Folds BatchNorms and rewrites `m` into QDQ form calibrated on 16 seeded
// inputs uniform in [0, 1], as XnnpackInt8's tests do (QuantizeStatic:
// int8 weights per output channel, per-tensor activation scales).
Status QuantizeOnUniformInputs(Model* m, uint64_t seed);

// One quantized layer run alone on the backend under check, its input the
// reference's int8 values (so earlier layers' differences do not reach
// it), against the reference's output. qc8: the int8 values of the Q its
// output feeds, `max_diff` in quantization steps; f32-sums: its f32
// output, `max_diff` relative to the largest output value.
struct LayerCheck {
  std::string node, impl;  // impl: the path the layer took alone
  double max_diff = 0;
  double off_fraction = 0;  // values that differ at all
  int64_t values = 0;
};

struct BackendCheck {
  int samples = 0;
  int top1_equal = 0;  // samples whose first output's argmax agrees
  // The worst sample's largest |got - want| over its largest |want|.
  double max_diff = 0;
  std::vector<LayerCheck> layers;  // every xnnpack qc8 / f32-sums layer
};

// Runs `m` (the graph `nodes` lists) on `backend` and on the reference
// kernels with `samples` seeded inputs.
StatusOr<BackendCheck> CheckAgainstReference(
    const Model& m, const std::vector<NodeKernel>& nodes, Backend backend,
    int threads, int samples, uint64_t seed);

}  // namespace shoal

#endif  // SHOAL_CLI_KERNELS_CHECK_H_
