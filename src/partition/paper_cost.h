// The fully-distributed paper's cost model (eqs. 6-10): per device the
// weights F_n it stores, the multiplications T on the longest path and the
// elements C communicated, for a chain of layers each placed whole, LOP, LIP
// or in a fused pair. Generalised from 1/N to unequal shares by splitting
// every layer into the whole units (channels, features) the plan builder
// splits, so the formulas count exactly what a plan transfers.
//
// Execution model (the paper's Figs. 4-7): the hub holds the input, does
// every concat and merge, runs whole layers and receives the output. A split
// layer gets its input from the hub and sends its outputs back to it, except
// what a device already holds: its own LOP output slice, when the next layer
// reuses it, and its own fused-pair slice, which never leaves it.
#ifndef SHOAL_PARTITION_PAPER_COST_H_
#define SHOAL_PARTITION_PAPER_COST_H_

#include <cstdint>
#include <vector>

#include "partition/chain.h"
#include "partition/scheme.h"
#include "util/status.h"

namespace shoal {

// Device parts, in elements, of one layer's input (m: what LIP and FUSE2
// split) and output (k: what LOP and FUSE1 split). A part list is empty, and
// its status says why, when the layer has fewer units than devices.
struct LayerParts {
  std::vector<int64_t> m;
  std::vector<int64_t> k;
  Status m_status;
  Status k_status;
};

struct LayerCost {
  Scheme scheme = Scheme::kWhole;
  int64_t communication = 0;     // C_l, elements
  std::vector<int64_t> weights;  // per device
  std::vector<int64_t> macs;     // per device
};

struct ChainCost {
  std::vector<LayerCost> layers;
  int64_t communication = 0;                // C, elements
  std::vector<int64_t> weights_per_device;  // F_n, elements
  int64_t macs_longest_path = 0;            // T: sum over layers of the max
};

// x * part / whole without overflow: a device's proportion of Q, R or of
// a tensor split by units.
int64_t Portion(int64_t x, int64_t part, int64_t whole);

// OK when 0 <= hub < shares.size().
Status ValidateHub(int hub, const std::vector<double>& shares);

// Checks sizes and units of every layer (errors name the layer).
Status ValidateChain(const std::vector<ChainLayer>& chain);

// Validates chain and shares, then splits every layer by SplitCounts.
StatusOr<std::vector<LayerParts>> SplitChain(
    const std::vector<ChainLayer>& chain, const std::vector<double>& shares);

// Whether `scheme` is one this model covers and the layer can be split so.
Status CheckSchemeFits(const ChainLayer& layer, const LayerParts& parts,
                       Scheme scheme);

// C_l with no reuse, in elements:
//   LOP   sum_{d!=hub} M + (K - K_hub)      FUSE1 sum_{d!=hub} M
//   LIP   (M - M_hub) + K (N-1)             FUSE2 K (N-1)        whole 0
// `parts` must fit the scheme (CheckSchemeFits).
int64_t BaseCommunication(const ChainLayer& layer, const LayerParts& parts,
                          Scheme scheme, int hub);

// What LOP or FUSE1 on `layer` does not send when the previous layer ran LOP
// and this one reuses its output: sum over d != hub of device d's channels'
// share of the reused input, P * K_{l-1,d} / K_{l-1} with P = M (or
// reuse_elements), which is M_d when both layers split the same channels
// (the paper's o_{l-1} M_l/N (N-1) term). 0 when the layer does not reuse.
int64_t ReusableElements(const ChainLayer& layer, const ChainLayer& prev,
                         const LayerParts& prev_parts, int hub);

// Whether a layer under `scheme` after a layer under `prev` reuses.
bool Reuses(Scheme prev, Scheme scheme);

// F, T and C of the chain with one scheme per layer. Fails, naming the layer,
// on a scheme outside {whole, lop, lip, fuse1, fuse2}, a fuse1 not followed by
// fuse2 or on a layer not fusable with the next, a fuse2 not after fuse1, or
// a layer with fewer units than devices under a split scheme.
StatusOr<ChainCost> EvaluateChain(const std::vector<ChainLayer>& chain,
                                  const std::vector<Scheme>& schemes,
                                  const std::vector<double>& shares,
                                  int hub = 0);

}  // namespace shoal

#endif  // SHOAL_PARTITION_PAPER_COST_H_
