// Strategies: each turns a model and a set of devices into a Plan by one
// method of the papers. One file per strategy; this is their registry.
#ifndef SHOAL_PARTITION_STRATEGY_H_
#define SHOAL_PARTITION_STRATEGY_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "partition/fuse_choice.h"
#include "partition/spatial_split.h"
#include "plan/broadcast.h"
#include "plan/plan.h"

namespace shoal {

class LatencyModel;

// What auto minimises: one request's latency, or the time per request of
// the busiest device (throughput).
enum class PlanObjective { kLatency, kThroughput };
const char* ObjectiveName(PlanObjective o);  // "latency", "throughput"
StatusOr<PlanObjective> ParseObjective(const std::string& name);

// Spatial: where the fc layers run.
enum class SpatialFc {
  kWhereNeeded,  // whole on the input device, split (lop) if it cannot hold
                 // the model's weights
  kWhole,
  kLop,
  // Split by inputs: each device multiplies the slice of the features it
  // gathers from the strips with its columns of the weights; the partial
  // sums are reduced on peers (reduce-scatter), each device's slice then
  // the next fc layer's input slice.
  kLip,
  // kLip but for the last fc layer, which runs whole on the input device,
  // the partial sums before it added there: one message where splitting
  // it costs two (its input reduce-scattered, its partial sums gathered),
  // for a layer too small to pay for them (AlexNet's and VGG16's last).
  kLipLastWhole,
};

struct PlanOptions {
  std::string strategy;
  std::vector<PlanDevice> devices;
  ModelRef model;
  int hub = 0;
  // Spatial: a chain of layers stays in one strip while all strips together
  // read at most this many times the chain input's rows (halo overhead).
  double max_read_factor = 1.5;
  // The same for a chain that reads the model input; below 0, the one
  // above. The input reaches the strips over the input device's one
  // uplink, so every extra row a deep chain reads costs that link's time
  // before any strip can start, where deeper chains later cost only their
  // recomputed rows: on slow links the first chain wants to be shallow.
  double input_read_factor = -1;
  // Spatial: above 0, strips fuse whole residual blocks into segments
  // (partition/fused_segments.h) that exchange nothing inside, each as
  // deep as keeps its strips' work within this many times the segment's
  // (at least one block); input_read_factor (when >= 1) bounds the first.
  double segment_work_factor = 0;
  // Spatial chains: strips of rows or 2-D tiles.
  TileShape tiles = TileShape::kStrips;
  // Spatial strips compute their interior while their halo travels
  // (BuildRequest::overlap_halos).
  bool overlap_halos = true;
  // How much more work a strip cut so may do
  // (BuildRequest::max_overlap_recompute).
  double max_overlap_recompute = kDefaultOverlapRecompute;
  // Partial sums reduced among the devices (BuildRequest::reduce_on_peers).
  bool reduce_on_peers = true;
  // heads: a layer split by its inputs computes its partial sums in chunks
  // of tokens, each reduced while the next computes
  // (BuildRequest::overlap_reductions).
  bool overlap_reductions = false;
  SpatialFc spatial_fc = SpatialFc::kWhereNeeded;
  // The model input is an image, sent as 8-bit pixels (Plan::input_pixels).
  bool input_pixels = false;
  // How one-to-many transfers travel (Plan::broadcast, plan/broadcast.h):
  // 0 one message per device, 1 a chain, 2 binary trees; with
  // broadcast_scatter (the default), the source sends each chunk to one
  // receiver, which passes it on down trees of this fan-out
  // (BroadcastSettings::scatter): with 16, to each other device directly.
  int broadcast_fanout = kMaxBroadcastFanout;
  bool broadcast_scatter = true;
  // auto only: each candidate's broadcasts travel the way that predicts
  // fastest for it (scatter, tree, chain or direct), not by the two above
  // (`plan --broadcast auto`, the default; naming a way turns it off).
  bool broadcast_auto = true;
  // How activations travel (Plan::wire): candidates are priced with it.
  WireSettings wire;
  double ilp_time_limit_s = 10;
  // fuse-ilp: minimise the busiest uplink's time (the default) or the
  // papers' total communication (partition/fuse_choice.h).
  FuseObjective fuse_objective = FuseObjective::kLinkTime;
  // Each device's uplink rate (Cluster::UplinkRates); empty: not known.
  std::vector<double> link_rates;
  double link_latency_s = 0;  // the slowest link's latency
  // auto: what to minimise (latency, or throughput: the busiest device's
  // time per request) and the cost model to predict it with (null: from the
  // devices' shares, links free).
  PlanObjective objective = PlanObjective::kLatency;
  std::shared_ptr<const LatencyModel> latency;
  // auto, throughput: requests in flight the candidates are simulated at
  // (0: one per device). The busiest device's time per request assumes
  // enough requests to fill every stage and replica; with fewer, a
  // latency plan can serve more.
  int concurrency = 0;
  uint64_t random_seed = 1;  // random: which assignment
  // spatial: the output rows each strip computes, top to bottom, of the
  // chain of strips that starts at the named node (auto's balancing of the
  // strips' finish times, planner/strip_balance.h); a chain not named, or
  // cut into 2-D tiles, follows the devices' shares.
  std::map<std::string, std::vector<int64_t>> spatial_rows;
  // spatial: the shares the 2-D tiles of the chain that starts at the named
  // node are cut by, one per device of the chain, left to right and top to
  // bottom (auto's balancing of the tiles' finish times); a chain not named
  // follows the devices' shares.
  std::map<std::string, std::vector<double>> spatial_shares;
  // spatial: the devices its strips, tiles and split fc layers run on,
  // ascending (empty: every device); the others hold nothing. Where every
  // message costs a link's latency, fewer devices exchange fewer halos:
  // ResNet-18 on two of eight Pi 3B+ over Wi-Fi predicts 186.0 ms, on all
  // eight 198.5.
  std::vector<int> spatial_devices;
};

// `g`: shaped, BN folded. Errors name the layer and the numbers.
StatusOr<Plan> MakePlan(const Graph& g, const PlanOptions& opts);

// Every registered strategy's name, in the order `shoal plan --help` and the
// docs list them.
std::vector<std::string> StrategyNames();

// A strategy turns a shaped graph and the options into a plan. Each one
// registers itself beside its code (SHOAL_REGISTER_STRATEGY), the way ops
// do: the partitioners here, auto, procedure1 and random in planner/, which
// builds on this folder; MakePlan finds them by name.
using StrategyFn = StatusOr<Plan> (*)(const Graph& g, const PlanOptions& opts);

class StrategyRegistry {
 public:
  static StrategyRegistry& Global();
  // `rank` orders StrategyNames(); one strategy function may serve several
  // names (lop, lip, channel and filter read opts.strategy).
  int Register(const std::string& name, int rank, StrategyFn fn);
  StrategyFn Find(const std::string& name) const;
  std::vector<std::string> Names() const;

 private:
  struct Entry {
    int rank;
    StrategyFn fn;
  };
  std::map<std::string, Entry> entries_;
};

#define SHOAL_REGISTER_STRATEGY(name, rank, fn)                            \
  static int SHOAL_CONCAT(shoal_strategy_, __COUNTER__) [[maybe_unused]] = \
      ::shoal::StrategyRegistry::Global().Register(name, rank, fn)

// The strips of rows a spatial plan with these options cuts (its fused
// segments and 2-D tiles aside): per chain, its first node and the output
// rows of each strip, top to bottom, as PlanOptions::spatial_rows names
// them.
struct StripRows {
  std::string chain;
  std::vector<int> devices;  // the strips' devices, top to bottom
  std::vector<int64_t> rows;
};
StatusOr<std::vector<StripRows>> SpatialStripRows(const Graph& g,
                                                  const PlanOptions& opts);

// The 2-D tiles a spatial plan with these options cuts: per chain, its
// first node, its devices (left to right, top to bottom), the shares its
// tiles are cut by, and the layout they make of the chain's output, as
// PlanOptions::spatial_shares names them.
struct TileCut {
  std::string chain;
  std::vector<int> devices;
  std::vector<double> shares;
  int64_t rows = 0, cols = 0;  // of the chain's output
  int tiles_per_band = 0;
};
StatusOr<std::vector<TileCut>> SpatialTileCuts(const Graph& g,
                                               const PlanOptions& opts);

// The devices' shares scaled to sum to 1.
std::vector<double> NormalizedShares(const std::vector<PlanDevice>& devices);

// A BuildRequest's common part (plan_builder.h).
struct BuildRequest;
BuildRequest BaseRequest(const Graph& g, const PlanOptions& opts);

}  // namespace shoal

#endif  // SHOAL_PARTITION_STRATEGY_H_
