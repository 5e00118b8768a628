// Swap, as the collaborative-execution paper's boards pay it. Its Raspberry
// Pi 3s ran Keras 2.1 on TensorFlow 1.5 with 1 GB of memory; a layer whose
// memory use under that framework exceeded what the board had free was
// paged to the SD card, and took minutes instead of a fraction of a second
// (its §5, Fig. 15; the super-linear speed-ups of its Fig. 11). Procedure 1's
// step 1 splits exactly those layers.
//
// A board class carries a FrameworkMemory when it stands for such a board
// (`pi3-collab`); the planner then splits and groups layers by the paper's
// rule (LayerMustSplit, WeightBudget), and `simulate`, the planner's
// predictions and the emulated worker add SwapSeconds to every request of a
// device whose deployment does not fit. A cluster file that gives the board
// more `memory` gives it more room: with enough, nothing swaps. Other
// classes have none: shoal's worker holds each weight once, and a plan that
// does not fit is refused (plan/plan_cost.h CheckPlanMemory).
#ifndef SHOAL_CLUSTER_SWAP_H_
#define SHOAL_CLUSTER_SWAP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "plan/plan.h"

namespace shoal {

struct BoardClass;

struct FrameworkMemory {
  // What the board keeps from the process: the GPU's share and the OS.
  int64_t system_bytes = 0;
  // The framework itself (interpreter, libraries, graph, RPC) before any
  // layer's weights.
  int64_t resident_bytes = 0;
  // How many times the framework holds the weights of the layer it loads
  // or runs (read from the file, converted, fed, kept as a variable).
  double layer_copies = 1;
  // How fast the board pages from its SD card (random reads in swap
  // clusters).
  double swap_bytes_per_s = 0;
  std::string source;  // where the figures come from
};

// The framework memory of a board class, nullptr when it has none.
const FrameworkMemory* FrameworkMemoryOf(const BoardClass* board);

// What a process may use on a board of `memory_bytes` before it swaps.
int64_t UsableBytes(const FrameworkMemory& fm, int64_t memory_bytes);

// The memory a deployment takes under the framework: the framework, every
// weight once, the largest layer's weights `layer_copies - 1` times more
// and the live activations.
int64_t FootprintBytes(const FrameworkMemory& fm, int64_t weight_bytes,
                       int64_t largest_layer_bytes, int64_t activation_bytes);

// Procedure 1's step 1: a layer of `weight_bytes` alone on the board
// already swaps, so it must be split.
bool LayerMustSplit(const FrameworkMemory& fm, int64_t memory_bytes,
                    int64_t weight_bytes);

// Weights a device can take (summed over its layers, each held
// `layer_copies` times at worst) without swapping: what Procedure 1's
// step 2 groups layers within.
int64_t WeightBudget(const FrameworkMemory& fm, int64_t memory_bytes);

// Seconds per request a deployment of this footprint pays to page what
// does not fit back in from the SD card; 0 when it fits.
double SwapSeconds(const FrameworkMemory& fm, int64_t memory_bytes,
                   int64_t footprint_bytes);

// Per task of `p`, the swap seconds it pays on `device` (plan index),
// which has `memory_bytes`: the device's SwapSeconds dealt to its tasks in
// proportion to their weights (each pages its own back in); 0 for tasks
// elsewhere. All zero when the deployment fits.
std::vector<double> SwapSecondsPerTask(const Plan& p, int device,
                                       const FrameworkMemory& fm,
                                       int64_t memory_bytes);

// The same for every plan device at once, as a table indexed task *
// devices + device, where `devices[d]` is plan device d's spec (its board
// and memory); empty when no device swaps. The simulator and the
// predictions read it.
std::vector<double> SwapTable(const Plan& p,
                              const std::vector<const DeviceSpec*>& devices);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_SWAP_H_
