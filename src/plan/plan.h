// The Plan: which device computes what, and which bytes go where. Plain data,
// serialised as JSON (docs/plan-format.md). A worker needs nothing but its
// tasks: each is a graph fragment plus the weight slices it reads, and the
// transfers say where each of its outputs goes.
#ifndef SHOAL_PLAN_PLAN_H_
#define SHOAL_PLAN_PLAN_H_

#include <optional>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "plan/region.h"
#include "util/status.h"

namespace shoal {

constexpr int kPlanVersion = 1;
// Pseudo task ids for the model's input (a source on the input device) and
// output (a sink on the output device).
constexpr int kModelInput = -1;
constexpr int kModelOutput = -2;

// What the plan was made from, so any process can load the same model.
struct ModelRef {
  std::string spec;            // zoo name or .onnx path
  Shape input_shape;           // empty: the model's default
  uint64_t weights_seed = 0;   // zoo models' random weights
  bool fuse_batchnorm = true;  // plans run on BN-folded graphs
  // LCP branching applied on load (`shoal plan --branches K`): the model is
  // `spec` split into this many branches (lcp/split_branches.h) with seeded
  // weights; 0: the model as it is.
  int64_t lcp_branches = 0;
  double lcp_fatten_pct = 0;
  // One relative width per branch (`shoal plan --strategy lcp` on unequal
  // devices: the cluster Splitter's); empty: equal branches.
  std::vector<double> lcp_shares;
};

// Bounds of a device's relative speed (a cluster file's `speed`, a plan's
// `share`): a million-fold spread between devices is far beyond any real
// cluster, and tiny or huge values would make the planner and the
// simulator spin on splits of ~0 elements.
constexpr double kMinShare = 1e-3;
constexpr double kMaxShare = 1e3;

struct PlanDevice {
  std::string name;
  double share = 1.0;        // relative speed: split sizes follow it
  int64_t memory_bytes = 0;  // 0: unknown
};

// A weight of a task's fragment: `region` of the model weight `source`.
struct WeightSlice {
  std::string name;    // the fragment's weight tensor
  std::string source;  // the model's weight tensor
  Region region;       // in the source's index space, or in `view`'s
  // The source read as another shape of the same elements, in the same
  // row-major order; `region` is a box of that shape, and its elements,
  // row-major, fill the fragment's weight (of as many elements). An fc
  // layer's [out, C*H*W] weight read as [out, C, H, W] gives the columns
  // that multiply one box of the feature map the layer reads flattened.
  // Empty: the source's own shape, and the slice has the box's shape.
  Shape view = {};

  // The shape `region` indexes: `view`, or the source's `source_shape`.
  const Shape& IndexShape(const Shape& source_shape) const {
    return view.empty() ? source_shape : view;
  }
};

struct Task {
  int id = 0;
  std::string name;  // "conv1/lop@1"
  // One device, or replicas served round robin in this order; a device
  // listed w times runs w of every devices.size() requests (plan/deal.h).
  std::vector<int> devices;
  std::string layer;   // model node it splits ("" for hub work)
  std::string scheme;  // lop, lip, fuse1, ..., whole, pipeline
  Graph fragment;      // shaped; inputs and outputs local tensors
  std::vector<WeightSlice> weights;

  // The distinct devices of `devices`, in order of first turn.
  std::vector<int> Replicas() const;
  // The fraction of the requests that `device` runs this task for.
  double Share(int device) const;
};

struct Endpoint {
  int task = 0;        // task id, kModelInput or kModelOutput
  std::string tensor;  // a fragment input/output, or the model's tensor
  Region region;       // in that tensor's local index space
};

struct Transfer {
  Endpoint src;
  Endpoint dst;
  Merge merge = Merge::kCopy;
  std::string layer;  // the layer whose communication this counts as
  // The values are int8 integers (a QuantizeLinear's output) and travel as
  // a byte each (plan/int8_transfers.h).
  bool int8 = false;
};

// Why a layer was split the way it was (or kept whole).
struct LayerDecision {
  std::string layer;
  std::string scheme;
  std::string reason;
};

// What a planner predicted for the plan it chose (`--strategy auto`), and
// the alternatives it beat; absent in plans made by one strategy.
struct DevicePrediction {
  std::string device;
  double compute_s = 0;        // its tasks, per request
  double communication_s = 0;  // what it sends, per request
  double idle_s = 0;           // latency minus the two above (>= 0)
};
struct PlanAlternative {
  std::string name;  // a strategy, "procedure1", "milp", "random", ...
  double latency_s = 0;
  double throughput_rps = 0;
  // Why it is missing (no latency then), or how it was made.
  std::string note;
};
struct PlanPrediction {
  std::string objective;  // latency or throughput
  std::string method;     // which candidate won: milp, procedure1, lop, ...
  std::string solver;     // what the MILP did (optimal, time limit, ...)
  double latency_s = 0;
  double throughput_rps = 0;
  // Throughput objective: the requests in flight throughput_rps was
  // simulated at (here and in the alternatives); 0: the busiest device's
  // time per request, with no bound on requests in flight.
  int concurrency = 0;
  std::vector<DevicePrediction> devices;
  std::vector<PlanAlternative> alternatives;
};

// How one-to-many transfers travel (plan/broadcast.h): fanout 0, one
// message per receiving device, straight from the source (plans made
// before broadcast trees load so); else trees of this fan-out, sent in
// chunks of chunk_bytes that receivers forward as they arrive. With
// scatter, the source sends each chunk to one receiver only, in turn, and
// that receiver passes it to the others (by trees of this fan-out): the
// source's uplink carries the tensor once, and every receiver's a share.
struct BroadcastSettings {
  int fanout = 0;
  int64_t chunk_bytes = int64_t{32} << 10;
  bool scatter = false;
};

// How activations travel between devices (runtime/tensor_codec.h). f32
// is exact; f16 and bf16 halve the bytes and round each value (to 11 and 8
// significant bits), so a plan that uses them is not exact and `run
// --check` judges it by WireTolerance. lz4 is lossless: a message whose
// values are sparse enough is compressed before it is sent. int8 is never
// a plan's dtype: it is how a transfer marked int8 travels (exact: its
// values are int8 integers), whatever the plan's dtype.
enum class WireDtype { kF32, kF16, kBF16, kInt8 };
struct WireSettings {
  WireDtype dtype = WireDtype::kF32;
  bool lz4 = false;
};
// "f32", "f16", "bf16", "int8".
std::string WireDtypeName(WireDtype d);
StatusOr<WireDtype> ParseWireDtype(const std::string& name);
int64_t WireDtypeBytes(WireDtype d);
// The largest relative difference from the one-device output that `run
// --check` accepts for a plan of this dtype: 1e-4 for f32 (the exactness
// invariant); for f16 and bf16, a few roundings of each value's relative
// precision (2^-11, 2^-8) carried through the layers after them.
double WireTolerance(WireDtype d);
// What lz4 makes of a sparse tensor on the wire, as a fraction of its
// bytes: measured on the ReLU outputs of AlexNet and VGG16 (about half
// their values zero: 0.47 to 0.65). Plans price a sparse source's
// transfers at this fraction.
constexpr double kSparseWireFraction = 0.62;
// The same for one that passed a max pool (graph/sparsity.h), whose zeros
// are fewer and scattered: lz4 makes 1.00 of float32 values with 0.2 %
// zeros (AlexNet's first pool on a random input) and 0.84 with 30 % (its
// later pools). Priced at 0.62, the halos of AlexNet's first pool on 2-D
// tiles went 1.5x slower than predicted.
constexpr double kPooledWireFraction = 0.95;

struct Plan {
  int version = kPlanVersion;
  std::string strategy;
  ModelRef model;
  std::vector<PlanDevice> devices;
  int input_device = 0;   // holds the model input (the papers' source)
  int output_device = 0;  // receives the model output
  Shape input_shape;      // the model's (single) input
  std::string input_name;
  // The input is an image: it travels as 8-bit pixels, a byte a value
  // (runtime/pixel_codec.h), and is priced so. Otherwise float32.
  bool input_pixels = false;
  BroadcastSettings broadcast;
  WireSettings wire;
  Shape output_shape;
  std::string output_name;
  std::vector<Task> tasks;  // ids 0..n-1 in order; order is execution order
  std::vector<Transfer> transfers;
  std::vector<LayerDecision> decisions;
  std::optional<PlanPrediction> prediction;

  const Task* FindTask(int id) const;
  // Bytes transfer `x` puts on the wire: a byte a value for the model
  // input of a plan whose input is pixels and for an int8 transfer, else
  // wire.dtype's bytes a value; with wire.lz4, a sparse source's at
  // kSparseWireFraction (kPooledWireFraction once pooled).
  int64_t WireBytes(const Transfer& x) const;
  // How `x` travels: `wire`, with dtype int8 for an int8 transfer.
  WireSettings TransferWire(const Transfer& x) const;
  // Whether transfer `x` carries values that are mostly zero: its source
  // is the output of an op the registry calls SparseOutput (a ReLU),
  // perhaps through ops that keep sparsity (a max pool, a reshape) in the
  // same task.
  bool SparseSource(const Transfer& x) const;
  // Device that runs task `id` for request number `request` (round robin
  // over replicas); the pseudo tasks map to the input/output devices.
  int DeviceOf(int task_id, int64_t request = 0) const;
};

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_H_
