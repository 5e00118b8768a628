// Spatial splitting (collaborative-execution paper §4.2): a chain of window
// layers (conv, pooling, the elementwise ops between) runs on horizontal
// strips of rows, one per device, sized by the devices' shares. Each strip
// reads its rows plus the halo the chain's windows need, so the whole chain
// runs without merging in between. Geometry as small pure functions
// (DeepThings' style), tested exhaustively.
#ifndef SHOAL_PARTITION_SPATIAL_SPLIT_H_
#define SHOAL_PARTITION_SPATIAL_SPLIT_H_

#include <vector>

#include "graph/graph.h"
#include "plan/region.h"

namespace shoal {

// A window along one axis.
struct Window1D {
  int64_t kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
  int64_t in_size = 0;
};

// Input rows needed for output rows [out_begin, out_end), clipped to the
// input, and the padding the strip then needs on each side.
struct StripInput {
  int64_t begin = 0, end = 0;
  int64_t pad_begin = 0, pad_end = 0;
};
StripInput InputRowsFor(const Window1D& w, int64_t out_begin, int64_t out_end);

// Whether `n` can run on a strip of rows (and why not).
Status CheckTileable(const Graph& g, const Node& n);

struct Tile {
  std::vector<Node> nodes;    // the chain with strip-local padding
  Region in_region;           // of the chain's input
  Region out_region;          // of the chain's output
  std::vector<int64_t> rows;  // output rows each node of the chain computes
};

// Strips of the chain `nodes` (each reading the previous one's output), one
// per share; each gets at least one output row.
StatusOr<std::vector<Tile>> TileChain(const Graph& g,
                                      const std::vector<const Node*>& nodes,
                                      const std::vector<double>& shares);

// The strip of output rows [out_begin, out_end) of the chain: the rows it
// reads and the nodes with that strip's padding.
StatusOr<Tile> TileRows(const Graph& g, const std::vector<const Node*>& nodes,
                        int64_t out_begin, int64_t out_end);

// Rows all strips read from the chain's input, over the input's rows: 1.0
// when the halos cost nothing.
StatusOr<double> ChainReadFactor(const Graph& g,
                                 const std::vector<const Node*>& nodes,
                                 const std::vector<double>& shares);

}  // namespace shoal

#endif  // SHOAL_PARTITION_SPATIAL_SPLIT_H_
