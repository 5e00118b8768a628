// Chains whose costs the fully-distributed paper states, for tests and docs.
#ifndef SHOAL_PARTITION_CHAIN_EXAMPLES_H_
#define SHOAL_PARTITION_CHAIN_EXAMPLES_H_

#include <random>
#include <vector>

#include "partition/chain.h"

namespace shoal {

// The paper's running example (Figs. 1-7): four fc layers 4 -> 8 -> 16 -> 4
// -> 4, each feeding the next through its activation only.
std::vector<ChainLayer> PaperFourLayerChain();

// Layers of 1 to 64 units (channels) of 1 to 16 elements each, so that some
// have fewer units than devices and lose their split schemes. A layer reads
// the previous one's channels as they are, pooled (fewer elements per
// channel), joined with extra channels (a concat), or not at all. For the
// tests that check the fusion ILP against the DP and brute force.
std::vector<ChainLayer> RandomChain(std::mt19937& rng);

// n random relative speeds (1 to 100), summing to 1.
std::vector<double> RandomShares(std::mt19937& rng, int n);

}  // namespace shoal

#endif  // SHOAL_PARTITION_CHAIN_EXAMPLES_H_
