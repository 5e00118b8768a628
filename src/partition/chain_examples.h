// Chains whose costs the fully-distributed paper states, for tests and docs.
#ifndef SHOAL_PARTITION_CHAIN_EXAMPLES_H_
#define SHOAL_PARTITION_CHAIN_EXAMPLES_H_

#include <vector>

#include "partition/chain.h"

namespace shoal {

// The paper's running example (Figs. 1-7): four fc layers 4 -> 8 -> 16 -> 4
// -> 4, each feeding the next through its activation only.
std::vector<ChainLayer> PaperFourLayerChain();

}  // namespace shoal

#endif  // SHOAL_PARTITION_CHAIN_EXAMPLES_H_
