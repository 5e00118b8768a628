// Seeded standard-normal tensors: the input a command or a test makes up
// when none is given, the same for the same seed on every machine.
#ifndef SHOAL_GRAPH_RANDOM_INPUT_H_
#define SHOAL_GRAPH_RANDOM_INPUT_H_

#include <cstdint>

#include "graph/weights.h"

namespace shoal {

// Elements drawn in order from N(0, 1) with std::mt19937_64(seed).
Tensor RandomInput(const Shape& shape, uint64_t seed);

}  // namespace shoal

#endif  // SHOAL_GRAPH_RANDOM_INPUT_H_
