// Fused segments of strips: a run of layers (whole residual blocks, with
// their shortcuts and sums) that every device computes on its strip of
// rows without a message in between. Each strip computes, beside its own
// rows of the segment's output, every row its device's later layers in the
// segment read, recomputing what its neighbours also compute; only the
// segment's input travels between devices (DeepThings' fused tile
// partitions over a DAG). Where each message costs a link's latency
// (9 ms on the Pi 3B+'s Wi-Fi), a halo exchange per residual block costs
// more than the rows recomputed. Geometry as small pure functions.
#ifndef SHOAL_PARTITION_FUSED_SEGMENTS_H_
#define SHOAL_PARTITION_FUSED_SEGMENTS_H_

#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

using Rows = std::pair<int64_t, int64_t>;  // [begin, end)

// Whether `n` can run on a strip inside a segment: a window layer, an
// elementwise op of one input, or an elementwise op whose inputs all have
// its 4-D output's shape (a residual sum).
bool SegmentTileable(const Graph& g, const Node& n);

// For `nodes` (a segment, in graph order) whose tensor `output` device d
// computes in rows own[d]: the rows of each node's output (rows[i][d])
// that device d computes so that every layer of the segment reads only
// rows its own device computed (the hull of what its readers there need).
// An error when a node would compute no row on a device.
StatusOr<std::vector<std::vector<Rows>>> SegmentRows(
    const Graph& g, const std::vector<const Node*>& nodes,
    const std::string& output, const std::vector<Rows>& own);

// The work (MACs plus output elements) the strips `rows` do, over the
// work of the segment unsplit: 1 when they recompute nothing.
StatusOr<double> SegmentWorkFactor(const Graph& g,
                                   const std::vector<const Node*>& nodes,
                                   const std::vector<std::vector<Rows>>& rows);

// Disjoint rows each device serves of a tensor it computes in `held`
// (sorted top to bottom): its rows below those of the devices above it;
// an empty range (begin == end) where they cover all of its own.
std::vector<Rows> DisjointRows(const std::vector<Rows>& held);

// The one activation tensor that nodes up to index p of g.nodes (p = -1:
// none, the model input) hand to the nodes after p, where a segment may
// begin or end; "" when there are several, or it is not 4-D.
std::string CutTensor(const Graph& g, int p);

}  // namespace shoal

#endif  // SHOAL_PARTITION_FUSED_SEGMENTS_H_
