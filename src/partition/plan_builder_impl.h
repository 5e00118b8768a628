// The plan builder's state, shared by the files that implement it: the
// walk over the nodes and the plan's last touches (plan_builder.cc), layers
// whole or split (plan_builder_layers.cc), partial sums
// (plan_builder_partials.cc), what tasks read (plan_builder_need.cc), nodes
// that run where their input's parts are (plan_builder_along.cc) and
// spatial chains (plan_builder_spatial.cc). Internal to partition/: only
// those files include it; the interface is partition/plan_builder.h.
#ifndef SHOAL_PARTITION_PLAN_BUILDER_IMPL_H_
#define SHOAL_PARTITION_PLAN_BUILDER_IMPL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "partition/plan_builder.h"
#include "partition/spatial_split.h"

namespace shoal {
namespace plan_build {

// Where the data of one model tensor lives after the tasks placed so far.
struct Holder {
  // Most holders keep the tensor under its own name.
  Holder(int task, Region region, std::string tensor = "")
      : task(task),
        region(region),
        owned(std::move(region)),
        tensor(std::move(tensor)) {}

  int task;
  Region region;  // of the full tensor
  // What it serves to tasks on other devices: the region, except for the
  // strips of a fused segment (SpatialChain::owned), which compute more
  // rows than their own for their device's later layers; the owned parts
  // of a tensor do not overlap. Empty: it serves its own device only.
  Region owned;
  // The name the holder task has for it, when not the tensor's own: the
  // input of a concat whose output lives in the places of its inputs.
  std::string tensor;
};
struct Dist {
  enum Kind { kWhole, kParts, kPartials } kind = kWhole;
  std::vector<Holder> holders;
  std::string layer;  // the split layer that produced parts/partials
};

inline bool IsOutputSplit(Scheme s) {
  return s == Scheme::kLop || s == Scheme::kChannel || s == Scheme::kFuse1;
}
inline bool IsInputSplit(Scheme s) {
  return s == Scheme::kLip || s == Scheme::kFilter || s == Scheme::kFuse2;
}

// Builds one plan from a BuildRequest: places each node of the model (whole,
// split, or in a spatial chain) as tasks and transfers, keeping where every
// tensor's data lives (Dist) as it goes.
class PlanBuilder {
 public:
  explicit PlanBuilder(const BuildRequest& r) : req_(r), g_(*r.graph) {}

  StatusOr<Plan> Build();

 private:
  Status Init();

  const Shape& ShapeOf(const std::string& t) const;
  int N() const { return static_cast<int>(req_.devices.size()); }

  // The devices a split runs on (every device when none are named) and
  // their shares, normalised over the group.
  Status Group(const std::vector<int>& named, const std::string& what,
               std::vector<int>* devs, std::vector<double>* shares) const;

  int NewTask(const std::string& name, std::vector<int> devices,
              const std::string& layer, Scheme scheme);

  int DeviceOfTask(int task) const { return plan_.DeviceOf(task, 0); }

  // Largest task id holding any input of `n` that is not inside `task`.
  int LatestSource(const Node& n, int task) const;

  // Whether node `n` would make the open task `t`, which already computes
  // something, wait for a task on another device that it does not wait for
  // yet. Then `n` starts a new task, so that what `t` holds runs while that
  // input is on its way: the hub's own LCP branch runs while the other
  // branches compute, not after their activations arrive.
  bool NewRemoteSource(const Node& n, int t) const;

  // The open task of a device group for whole nodes: reused while it runs
  // after every task it would wait for.
  int WholeTaskFor(const Node& n, const std::vector<int>& devices);

  static std::string DeviceList(const std::vector<int>& d);

  Status AddWeights(int task, const std::vector<WeightSlice>& ws);

  Status AddWholeWeights(int task, const Node& n);

  // Sums partial outputs on one device (the input device unless `device`
  // names another), so that consumers can read the complete tensor.
  Status MergePartials(const std::string& tensor, int device = -1);

  // Reduce-scatter (BuildRequest::reduce_on_peers): every device holding
  // partial sums of `tensor` sums one slice of its channels, received from
  // each holder, instead of all of them going to the input device. Each
  // uplink then carries (G-1)/G of the tensor, where the input device's
  // downlink carried G-1 whole copies; a next input split over the same
  // devices reads the slices where they are. False, and nothing changed,
  // when the partials are not held one per device, the channels are too
  // few, or the holders more than kMaxReduceScatterDevices.
  StatusOr<bool> ScatterPartials(const std::string& tensor);

  // Partial sums that a split layer or strip chain reads: scattered over the
  // devices that hold them where that is on, else summed on the input
  // device.
  Status ResolvePartials(const std::string& tensor);

  // Makes `tensor` (the part `want` of it) an input of `task`, with the
  // transfers that fill it from wherever it lives.
  Status Need(int task, const std::string& tensor, const Region& want,
              const std::string& consumer_layer);

  static const std::string& NameIn(const Holder& h, const std::string& t);

  // A concat whose inputs live on several devices is not gathered to run:
  // its output is where its inputs are, each input's holders its parts
  // (offset along the axis), and a reader takes its region straight from
  // them. LCP's branch outputs stay on their devices, so the classifier,
  // split by input features along the branches, reads nothing remote.
  StatusOr<bool> PlaceConcatOfParts(const Node& n);

  // Whether tensor `name` is computed inside task t (not received), so its
  // extent there is the task's part of it.
  bool ComputedIn(int t, const std::string& name) const;
  // Whether `n` could run on channel slices of its input: elementwise, per
  // channel or a flatten (PlaceAlongParts, PlaceAlongSlices decide).
  static bool ChannelLocal(const Node& n);

  // ComputedIn, or the slice a reduce-scatter task summed.
  bool HeldIn(int t, const std::string& name) const;

  // Adds node `n` to task t, computing the part `out` of its output. A
  // Reshape of a part yields the part's extents, not the whole's.
  Status AddPartNode(int t, const Node& n, const Region& out);

  // A node of one activation input that reads channel slices (of a
  // reduce-scatter, or of an output split whose output has several
  // readers) and acts on each channel alone (a pool, an activation) or
  // flattens them runs on each slice where it lives: the next layer split
  // by inputs over the same devices then reads its slices without any
  // message, and one split by outputs gathers the smaller pooled slices
  // from their holders instead of the whole tensor through one device.
  StatusOr<bool> PlaceAlongSlices(const Node& n);

  // A flatten of a tensor split into parts that are not its channels (the
  // strips of rows of VGG's last pooling), read by one layer split by its
  // inputs (lip): each of that layer's devices gathers the channels its
  // slice of the inputs holds, a box of rows x channels from each strip's
  // device, and flattens them there. The map goes from every device to
  // every other (each uplink carries about its own strip once) and in one
  // step, where gathering it whole on the input device and handing out
  // the slices is two steps through that device's link.
  //
  // The same for a pool whose output only that flatten reads (AlexNet's
  // last pool, of 6 rows, after strips of 13 over eight devices): each
  // device gathers its channels of the pool's input, all rows, and pools
  // them itself. That is one message between each pair of devices, where
  // pooling on strips of rows first would cost a halo exchange before it.
  StatusOr<bool> PlaceRelayoutForInputSplit(const Node& n);
  // A flatten of a tensor held in boxes of its map that span the batch
  // (the 2-D tiles of AlexNet's last pooling over eight devices), read,
  // past elementwise ops, by one fc layer split by its inputs: each
  // device multiplies its box, flattened, by the weight's columns for that
  // box (a view of the weight as [out, C, H, W]), and the partial sums are
  // added up as any input split's are. No message regroups the boxes
  // first, where PlaceRelayoutForInputSplit sends each device its
  // channels: one exchange fewer, each an all-to-all that costs a Wi-Fi
  // link's latency (plan_builder_boxes.cc).
  StatusOr<bool> PlaceFcOnBoxes(const Node& n);
  // The one node that reads `tensor`, past single-input elementwise ops no
  // layer choice or placement names (a dropout; listed in `between` when
  // given); null when a tensor on the way has other readers or is the
  // model's output.
  const Node* ReaderPastElementwise(const std::string& tensor,
                                    std::vector<const Node*>* between) const;
  // A pool, or any op that acts on each channel alone and windows it.
  static bool PoolsPerChannel(const Node& n);

  // An elementwise node whose input is split into parts (the strips or
  // channel parts of a residual block's branches) runs on each part where
  // it lives. Gathering the parts to one device to add them would put that
  // device on the path of every block and move the parts there and back.
  // The part's own task takes the node when it computes every input there;
  // else a task of its own on that device receives them.
  StatusOr<bool> PlaceAlongParts(const Node& n);

  // With BuildRequest::along_heads: a node whose activation inputs are all
  // split into parts on the same devices, and whose op maps each part of
  // them to one part of its output (a reshape or permutation of whole
  // boxes, a product per batch index, a normalisation off the parts' axes,
  // an elementwise op with scalar constants), runs on each part where it
  // is (plan_builder_heads.cc).
  StatusOr<bool> PlaceAlongHeads(const Node& n);

  // With BuildRequest::along_heads: a node that reduces over the axis its
  // one input is split along (a LayerNorm of the reduce-scattered feature
  // slices) runs whole on every device that holds a slice, each gathering
  // the others' slices (an all-gather), instead of on the input device,
  // which would then send its output to every device. Each copy serves
  // the others its own slice (Holder::owned). The reshapes that only read
  // its output ride along.
  StatusOr<bool> ReplicateOverParts(const Node& n);

  // With BuildRequest::windows: a node whose output is a map of a window
  // grid runs on each band of it, receiving the boxes of its inputs the
  // band reads (WindowNeeds) from wherever they are; a node between such
  // maps runs on each device's part of its inputs where they are, when its
  // op maps that part to one box of its output (WindowPartOutput)
  // (plan_builder_windows.cc).
  StatusOr<bool> PlaceInWindows(const Node& n);
  // A map's box of windows that is not whole rows of it (a run of windows
  // within one window row) made rows for a dense layer and the rows made a
  // map again: the three nodes run on each box as its own rows.
  StatusOr<bool> PlaceRowsOfBoxes(const Node& n);
  // The grid whose maps have shape `s`, if any.
  const WindowGrid* GridOf(const Shape& s) const;
  // PartOutput, and also a strided crop (the part's elements it takes,
  // possibly none), a selection along an axis the part holds whole, a
  // dense layer's rows, elementwise ops with constants broadcast.
  std::optional<Region> WindowPartOutput(const Node& n,
                                         const std::vector<std::string>& acts,
                                         const std::vector<Region>& ins) const;
  // The boxes of its activation inputs `ins` that the box `out` of `n`'s
  // output reads (an empty box: a concat's input it does not read), when
  // its op's facts say so.
  std::optional<std::vector<Region>> WindowNeeds(
      const Node& n, const std::vector<std::string>& ins,
      const Region& out) const;
  // The box of `tensor` that task t holds under its name, if known.
  std::optional<Region> LocalRegion(int t, const std::string& tensor) const;
  // Adds node `n` to task t for the box `out` of its output, reading the
  // boxes `need` of its activation inputs `ins` (cut out of what t holds
  // when that is more), its attributes and weights cut to match.
  Status AddWindowNode(int t, const Node& n,
                       const std::vector<std::string>& ins,
                       const std::vector<Region>& need, const Region& out);

  // The part of `n`'s output that the parts `ins` of its activation inputs
  // `acts` give, when its op's facts say it maps them so.
  std::optional<Region> PartOutput(const Node& n,
                                   const std::vector<std::string>& acts,
                                   const std::vector<Region>& ins) const;

  static int64_t HeldElements(const Dist& d);

  Status PlaceWhole(const Node& n, const std::vector<int>& devices);

  // Consumers that ride along with an output split: channel-local ops and
  // reshapes, each reading only the previous one's output. `regions` (the
  // parts of the layer's output) become the parts of the last one's output.
  // `steps` (optional) gets each follower's output parts.
  std::vector<const Node*> Followers(
      const Node& n, std::vector<Region>* regions, std::string* last,
      std::vector<std::vector<Region>>* steps = nullptr);

  Status PlaceSplit(const Node& n, const LayerChoice& choice);

  // Each device computes its share of the layer's outputs (whole multiples
  // of `unit` of them: LayerChoice::unit, in each of `segments` equal
  // segments: LayerChoice::segments), and the ops after it that act per
  // channel travel with it.
  Status PlaceOutputSplit(const Node& n, Scheme s,
                          const std::vector<int>& group,
                          const std::vector<double>& gshares, int64_t unit,
                          int64_t segments = 1);

  // LayerChoice::rows_as_held: each device's columns on its own rows of the
  // input first, then on the rows after and before them. False, nothing
  // placed, when the input is not held in parts by rows.
  // Each device's columns are whole multiples of `unit`; `merged`:
  // LayerChoice::rows_merged.
  StatusOr<bool> PlaceOutputSplitByRows(const Node& n, Scheme s,
                                        const std::vector<int>& group,
                                        const std::vector<double>& gshares,
                                        int64_t unit, bool merged);

  // Each device reads its share of the layer's inputs and holds a partial
  // sum of the whole output.
  Status PlaceInputSplit(const Node& n, Scheme s, const std::vector<int>& group,
                         const std::vector<double>& gshares);

  // The box of `tensor`'s rows and columns that tasks on `device` hold
  // together (every channel of it), the one that shares most with `want`;
  // empty when none is there. Several tasks may hold it between them (the
  // parts of a tile cut for overlap): their union counts when it is a box.
  std::optional<Region> LocalBox(const std::string& tensor, int device,
                                 const Region& want) const;

  // A device's tile of a spatial chain, cut so that its halo arrives while
  // it computes: the box it can compute from its own input (the interior)
  // and the bands at its edges that also read a neighbour's: rows above
  // and below (every column of the tile), then columns left and right.
  // The edges come first (lower task ids run first on a worker when both
  // are ready): they finish early and go on to the neighbours, whose own
  // edges wait for them, while the interior runs. One part when the tile
  // reads nothing from another device, or when no interior is left.
  StatusOr<std::vector<std::pair<std::string, Tile>>> OverlapParts(
      const std::vector<const Node*>& nodes, int device, const Tile& tile);

  Status PlaceSpatial(const SpatialChain& ch);

  StatusOr<Plan> Finish();

  // A strip whose rows no later layer reads (the last row of an odd-sized
  // map under a stride-2 layer, when strips are one row high) computes
  // nothing anyone needs: drop it and what it would have received.
  void RemoveUnreadTasks();

  Scheme whole_scheme_ = Scheme::kWhole;
  const BuildRequest& req_;
  const Graph& g_;
  Plan plan_;
  std::vector<double> shares_;
  std::map<std::string, Dist> dist_;
  std::set<int> reducers_;  // the tasks of ScatterPartials
  std::set<std::string> placed_;
  std::map<std::vector<int>, int> open_;
  std::map<std::string, LayerDecision> notes_;  // followers and whole nodes
  // The box of a tensor a task received for the windows' nodes, by (task,
  // tensor).
  std::map<std::pair<int, std::string>, Region> window_local_;
  // What each device received of a tensor, by (tensor, device).
  std::map<std::pair<std::string, int>, std::vector<Holder>> received_;
};

}  // namespace plan_build
}  // namespace shoal

#endif  // SHOAL_PARTITION_PLAN_BUILDER_IMPL_H_
