// Spatial splitting (collaborative-execution paper §4.2): a chain of window
// layers (conv, pooling, the elementwise ops between) runs on horizontal
// strips of rows, one per device, sized by the devices' shares, or on 2-D
// tiles (bands of rows, each cut into columns) when the strips would be so
// thin that their halos are most of what they read. Each tile reads its
// box plus the halo the chain's windows need, so the whole chain runs
// without merging in between. Geometry as small pure functions
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
  std::vector<Node> nodes;    // the chain with tile-local padding
  Region in_region;           // of the chain's input
  Region out_region;          // of the chain's output
  std::vector<int64_t> rows;  // output rows each node of the chain computes
  std::vector<int64_t> cols;  // and output columns (all of them in a strip)
};

// How many times its uncut work a tile cut for halo overlap may do by
// default (BuildRequest::max_overlap_recompute): past a tenth more, a deep
// chain on a thin strip waits for its halo instead.
inline constexpr double kDefaultOverlapRecompute = 1.1;

// Output rows [row_begin, row_end) and columns [col_begin, col_end) of a
// chain's last layer; col_end < 0 means every column (a strip).
struct TileBounds {
  int64_t row_begin = 0, row_end = 0;
  int64_t col_begin = 0, col_end = -1;
};

// How `shares.size()` devices cut an output of `rows` x `cols`: bands of
// `tiles_per_band` devices each (the last band may hold fewer), in device
// order left to right, top to bottom. A band's rows follow the sum of its
// devices' shares, and each device's columns its share within the band;
// tiles_per_band 1 gives strips of rows. Every tile gets at least one row
// and one column.
StatusOr<std::vector<TileBounds>> TileLayout(int64_t rows, int64_t cols,
                                             const std::vector<double>& shares,
                                             int tiles_per_band);

// Tiles of the chain `nodes` (each reading the previous one's output), one
// per share, laid out as TileLayout says.
StatusOr<std::vector<Tile>> TileChain(const Graph& g,
                                      const std::vector<const Node*>& nodes,
                                      const std::vector<double>& shares,
                                      int tiles_per_band = 1);

// The tile `b` of the chain's output: the box of the chain's input it reads
// and the nodes with that tile's padding.
StatusOr<Tile> TileBox(const Graph& g, const std::vector<const Node*>& nodes,
                       const TileBounds& b);

// The strip of output rows [out_begin, out_end), every column.
StatusOr<Tile> TileRows(const Graph& g, const std::vector<const Node*>& nodes,
                        int64_t out_begin, int64_t out_end);

// Input elements all tiles read from the chain's input, over the input's
// size: 1.0 when the halos cost nothing.
StatusOr<double> ChainReadFactor(const Graph& g,
                                 const std::vector<const Node*>& nodes,
                                 const std::vector<double>& shares,
                                 int tiles_per_band = 1);

// Which layout spatial chains take (`plan --tiles`). Strips by default:
// on eight emulated Pi 3s ResNet-18 and VGG16 ran 1.07-1.35x slower on
// 2-D tiles than on strips, though tiles moved 26-41 % fewer bytes: a tile
// has up to eight neighbours, so each halo exchange is more messages and
// thinner edge parts, each with a slow device's fixed cost. Tiles are for
// links where bytes, not messages, are what is scarce.
enum class TileShape {
  kStrips,  // strips of rows
  k2D,      // 2-D tiles (at least two side by side)
};
StatusOr<TileShape> ParseTileShape(const std::string& s);

// Tiles per band for the chain `nodes` on `shares`: 1 for strips; for k2D
// the 2-D layout whose tiles, each with a halo of one row and column on
// every inner side, read least of the chain's output map (so every chain ending
// in maps of one size takes the same layout). 0 when no layout of that shape
// fits.
int ChooseTilesPerBand(const Graph& g, const std::vector<const Node*>& nodes,
                       const std::vector<double>& shares,
                       TileShape shape = TileShape::kStrips);

}  // namespace shoal

#endif  // SHOAL_PARTITION_SPATIAL_SPLIT_H_
