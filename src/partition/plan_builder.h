// Turns per-layer split decisions into a Plan. The papers' execution model:
// the input device (the "source" of the fully-distributed paper, device 0 by
// default) holds the model input, runs every layer that is kept whole and
// receives the output; a split layer runs as one task per device, fed by
// transfers straight from whichever tasks hold the data it needs (a device
// reuses what it computed itself), and its parts are merged (concat or sum)
// where the next consumer reads them.
#ifndef SHOAL_PARTITION_PLAN_BUILDER_H_
#define SHOAL_PARTITION_PLAN_BUILDER_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.h"
#include "partition/scheme.h"
#include "partition/spatial_split.h"
#include "plan/plan.h"

namespace shoal {

struct LayerChoice {
  LayerChoice() = default;
  // Without devices: over every device, as most strategies split.
  LayerChoice(Scheme scheme, std::string reason, std::vector<int> devices = {})
      : scheme(scheme),
        reason(std::move(reason)),
        devices(std::move(devices)) {}

  Scheme scheme = Scheme::kWhole;
  std::string reason;
  // The devices a split layer runs on, in part order (empty: every device);
  // parts follow their shares.
  std::vector<int> devices;
  // An output split gives each part whole multiples of this many outputs:
  // a head's width in attention's projections, so that a device's columns
  // are whole heads (partition/transformer_blocks.h).
  int64_t unit = 1;
  // An output split of a layer whose outputs are this many equal segments
  // (a projection packing Q, K and V) splits each segment alike: a device
  // computes the same share of each, one part per segment.
  int64_t segments = 1;
  // An output split whose input is held in parts by rows (a transformer's
  // tokens, reduce-scattered) computes its columns on its own device's
  // rows first, then on the rest (after them, then before them) as they
  // arrive: the all-gather of the rest overlaps the first
  // (BuildRequest::overlap_reductions; heads sets it on an MLP's first
  // layer).
  bool rows_as_held = false;
  // With rows_as_held: each device's runs are then put together in one
  // part before anything reads them (attention's projections: each head's
  // products read every token's keys and values).
  bool rows_merged = false;
};

// A spatially split chain of window layers (conv/pool and the elementwise
// ops between them): strips of rows, or 2-D tiles (spatial_split.h).
struct SpatialChain {
  std::vector<std::string> nodes;  // in order, each reading the previous
  std::string reason;
  // Tiles left to right, top to bottom (empty: every device).
  std::vector<int> devices;
  // Tiles side by side in each band of rows; 1: strips of rows.
  int tiles_per_band = 1;
  // A fused segment's strips (partition/fused_segments.h), per device of
  // the group: the output rows [begin, end) each computes, its own and
  // those its device's later layers in the segment read, and the rows it
  // serves to other devices (disjoint; begin == end: none). Empty: the
  // strips or tiles of the layout, each serving what it computes.
  std::vector<std::pair<int64_t, int64_t>> rows, owned;
  // Strips' shares of the chain's output rows, per device of the group
  // (auto's balancing, PlanOptions::spatial_rows); empty: the devices'.
  std::vector<double> shares;
};

// A grid of attention windows (a Swin stage, partition/window_grids.h): its
// maps [1, height, width, C] are split into boxes of whole windows, box k
// on devices[k]: bands of whole window rows, or, with more devices than
// window rows, runs of windows within one window row (so that a box's
// windows are a run of the stage's windows in order). Within a window
// nothing is read across its edge, so a box computes its windows'
// attention, MLPs and norms alone; only a shift of the windows moves a few
// rows and columns between neighbours.
struct WindowBox {
  int64_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
};
struct WindowGrid {
  int64_t height = 0, width = 0, window = 0;
  std::vector<int> devices;
  std::vector<WindowBox> boxes;
};

struct BuildRequest {
  const Graph* graph = nullptr;  // shaped, one input, one output
  ModelRef model;
  std::vector<PlanDevice> devices;
  std::string strategy;
  int hub = 0;                                // input and output device
  std::map<std::string, LayerChoice> layers;  // absent: whole
  std::vector<SpatialChain> spatial;
  // Devices of the nodes kept whole (absent: the hub); several devices
  // replicate the node's task (data parallelism): BuildPlan deals its
  // requests over them in proportion to their shares (plan/deal.h).
  std::map<std::string, std::vector<int>> placement;
  Scheme whole_scheme = Scheme::kWhole;  // kPipeline for pipeline stages
  int output_device = -1;                // -1: the hub
  bool input_pixels = false;             // Plan::input_pixels
  BroadcastSettings broadcast;           // Plan::broadcast
  WireSettings wire;                     // Plan::wire
  // A spatial strip that reads rows of a neighbour's is cut into the rows
  // it computes from its own input and the edges that wait for the halo,
  // so that the halo travels while the interior computes.
  bool overlap_halos = true;
  // A strip cut so is done at most this many times its uncut work: its
  // parts recompute the rows of the chain's inner layers that neighbouring
  // parts also need. 1.1 keeps a deep chain on a thin strip whole; where
  // every message costs a link's latency, the interior computed while the
  // halo travels can be worth more (auto tries both).
  double max_overlap_recompute = kDefaultOverlapRecompute;
  // Partial sums (input splits) are reduced among the devices that hold
  // them, each summing one slice of channels (reduce-scatter), and a whole
  // node off the input device sums them itself; off, every partial sum goes
  // to the input device (the papers' execution model, which their
  // communication formulas count).
  bool reduce_on_peers = true;
  // Nodes that move boxes of their input whole (a Reshape of whole heads,
  // a Transpose), multiply two activations per batch index (attention's
  // MatMuls), normalise off the split axes (Softmax) or act elementwise
  // with scalar constants run on the parts of their input where those are,
  // instead of gathering it: a transformer's heads stay on their devices
  // from the Q/K/V projections to the output projection (the heads
  // strategy). Off, such nodes gather their input, as the plans of the
  // other strategies were built and measured.
  bool along_heads = false;
  // With along_heads and reduce_on_peers: a layer split by its inputs whose
  // output is [tokens, features] computes its partial sums in chunks of
  // tokens, one task each: first the tokens whose sums other devices
  // reduce, then its own. Each chunk's partial sums leave while the next
  // chunk computes, where the whole layer's left after it: the block's
  // reduction overlaps its compute (auto tries both; each chunk pays a
  // board's step).
  bool overlap_reductions = false;
  // The windows strategy: every tensor shaped as a grid's map is split
  // into its bands, and the nodes between such maps run on each band where
  // it is, a node whose band reads rows another device holds (a shift)
  // receiving just those rows (plan_builder_windows.cc). Empty: off.
  std::vector<WindowGrid> windows;
};

// The most devices one reduce-scatter spans. Every holder sends every other
// a slice, G * (G - 1) messages per tensor: beyond this many, each slice is
// a few channels whose per-message cost (a link latency, the framing) is
// more than the bytes saved, and at a thousand devices the plan's
// transfers alone would not fit in memory. More holders than this are
// summed on the input device.
inline constexpr size_t kMaxReduceScatterDevices = 64;

StatusOr<Plan> BuildPlan(const BuildRequest& req);

// Nodes the lop/lip family can split: Conv with one group and Gemm reading
// a [1, K] input and a weight matrix.
bool IsSplittableLayer(const Graph& g, const Node& n);

}  // namespace shoal

#endif  // SHOAL_PARTITION_PLAN_BUILDER_H_
