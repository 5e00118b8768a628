// The splittable layers of a model (Conv with one group, Gemm on a row) in
// order, with the sizes the papers' cost formulas use and whether each one
// reads the previous one's output directly (through channel-local ops and
// reshapes only): then an LOP output can be reused and a pair fused.
#ifndef SHOAL_PARTITION_MODEL_CHAIN_H_
#define SHOAL_PARTITION_MODEL_CHAIN_H_

#include <string>
#include <vector>

#include "graph/graph.h"
#include "partition/chain.h"

namespace shoal {

// Whether `to`'s input is `from`'s output after only ops that keep a channel
// split intact (elementwise, pooling, flatten), each the only reader of the
// previous tensor.
bool ReadsDirectly(const Graph& g, const Node& from, const Node& to);

StatusOr<std::vector<ChainLayer>> ModelChain(const Graph& g);

// The units an input split of `n` hands out whole: input channels of a
// conv; for an fc reading a flattened feature map, the map's channels (so
// that it splits like the conv before it); else its input features.
int64_t InputUnits(const Graph& g, const Node& n);

// The tensor an output split of `n` ends in once the channel-local ops and
// reshapes that read only its output ride along (what its devices send).
std::string SplitOutputEnd(const Graph& g, const Node& n);

}  // namespace shoal

#endif  // SHOAL_PARTITION_MODEL_CHAIN_H_
