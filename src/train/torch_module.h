// The boundary between shoal and its libtorch module (libshoal_torch.so,
// built from src/train/torch_*.cc). libtorch's static initialisers cost
// every process that loads it about 0.6 s of CPU, so no binary links it:
// trainer.cc dlopen()s the module on the first TrainGraph / TorchForward
// call, and the module finds shoal's own symbols in the executable (linked
// with ENABLE_EXPORTS). No libtorch types cross the boundary.
#ifndef SHOAL_TRAIN_TORCH_MODULE_H_
#define SHOAL_TRAIN_TORCH_MODULE_H_

#include "train/trainer.h"

namespace shoal {

// Bump when the table or the types it passes change.
inline constexpr int kTorchModuleVersion = 1;

struct TorchModuleApi {
  int version;
  StatusOr<TrainResult> (*train)(const Graph& g, const ImageDataset& data,
                                 const TrainOptions& o);
  StatusOr<std::vector<Tensor>> (*forward)(const Graph& g,
                                           const WeightStore& weights,
                                           const std::vector<Tensor>& inputs,
                                           bool batch_branches, bool* batched);
};

}  // namespace shoal

// The module's one exported entry point, looked up by dlsym.
extern "C" const shoal::TorchModuleApi* ShoalTorchModuleApi();

#endif  // SHOAL_TRAIN_TORCH_MODULE_H_
