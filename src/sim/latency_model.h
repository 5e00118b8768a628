// Predicted compute and transfer times of a cluster, the one cost model that
// the planner (--strategy auto), the simulator and `shoal serve` share. From
// the cluster file alone (device speed, link) or from a measured profile.
#ifndef SHOAL_SIM_LATENCY_MODEL_H_
#define SHOAL_SIM_LATENCY_MODEL_H_

#include <tuple>
#include <vector>

#include "cluster/cluster.h"
#include "graph/cost.h"
#include "graph/graph.h"
#include "sim/layer_table.h"
#include "sim/profile.h"
#include "util/status.h"

namespace shoal {

// A Raspberry Pi 3 (speed 1): VGG16's 15.5 GMAC in 9.4 s (the LCP paper's
// Fig. 12); compute bound, so a fair per-MAC rate (docs/cluster-format.md).
constexpr double kPi3MacsPerSecond = kLcpPi3MacsPerSecond;
// Layers without MACs (pooling, activations) touch every element once or a
// few times; per element they cost about this many MACs.
constexpr double kMacsPerElement = 0.5;
// Every weight of a layer is read from memory at least once per inference,
// at the memory's rate, not the arithmetic's: a fully connected layer does
// one MAC per weight, so a Pi 3 runs AlexNet's fc6 (151 MB) in about
// 0.15 s, not the 23 ms its 38 M MACs take at kPi3MacsPerSecond. A
// Cortex-A53 streams about 1.2 GB/s (a large memcpy copies 1 GB/s, reading
// and writing; docs/cluster-format.md). An emulated Pi 3 matches it on
// weights that fit the host's cache, not on larger ones: it streams those
// at the host's DRAM rate times its CPU fraction, about a third of this on
// the host docs/cluster-format.md describes ("What the calibration does not
// carry over").
constexpr double kPi3WeightBytesPerSecond = 1.2e9;

class LatencyModel {
 public:
  // From device specs: a named board (cluster/board.h) by its class's
  // rates times its speed; a device of speed s without one (or the LCP
  // paper's Pi 3 class) does s * kPi3MacsPerSecond and reads weights at
  // s * kPi3WeightBytesPerSecond, the two times added.
  static LatencyModel FromCluster(const Cluster& c);
  // From measurements: each device's fitted regressions and measured link.
  // Devices of `c` missing in `p` are an error naming them. `model` (as the
  // profile and the plan name it: a zoo name or the .onnx path) selects the
  // samples read layer by layer (LayerTable); other nodes use the fits.
  static StatusOr<LatencyModel> FromProfile(const Cluster& c, const Profile& p,
                                            const std::string& model = "");

  int num_devices() const { return static_cast<int>(devices_.size()); }
  const Cluster& cluster() const { return cluster_; }

  // One node on device d, from its layer's samples, else a measurement of
  // the same op and size, else the fit.
  NodeTimes Times(int d, const NodeCost& cost) const;
  // What the planner prices a layer at: a whole layer in the model, a
  // split of one as the fragment of its own that it runs as.
  double NodeSeconds(int d, const NodeCost& cost) const;
  // A task's fragment: its nodes in the kernels' layout, plus the reorders
  // at its edges (the first computing node's input and the last one's
  // output arrive and leave plain). A one-node fragment is the node alone.
  double FragmentSeconds(int d, const std::vector<NodeCost>& nodes) const;
  StatusOr<double> GraphSeconds(int d, const Graph& g) const;
  // `bytes` sent by src to dst over src's uplink: latency + bytes / rate;
  // 0 when src == dst.
  double TransferSeconds(int src, int dst, int64_t bytes) const;
  // MACs per second of a large conv on d: what split sizes should follow
  // (an accelerator's peak on a device that has one).
  double MacsPerSecond(int d) const;
  // The CPU limit an emulated device runs under (from the profile, else the
  // cluster file's `cpu`); NodeSeconds is the time under it when busy.
  CpuQuota Quota(int d) const { return devices_.at(d).quota; }
  // What the idle worker on device d uses of the host CPU per second
  // (profile; 0 from the cluster file): under a quota, not the device's.
  double IdleCpuPerSecond(int d) const { return devices_.at(d).idle_cpu_per_s; }
  // What of d's quota is left for requests: the idle worker's CPU comes out
  // of every period. A reading above half the quota is taken as an upset
  // profile, not idling.
  CpuQuota QuotaLeft(int d) const;
  // What device d sends over: measured (profile) or the cluster file's.
  const Link& LinkOf(int d) const { return devices_.at(d).link; }
  // Host CPU seconds device d spends to send or to receive one message of
  // `bytes` (measured by the profile; 0 from the cluster file). Under a CPU
  // quota they take the device's quota like compute does.
  double SendCpuSeconds(int d, int64_t bytes) const {
    const Device& x = devices_.at(d);
    return x.send_cpu_s + x.send_cpu_per_byte_s * double(bytes);
  }
  double RecvCpuSeconds(int d, int64_t bytes) const {
    const Device& x = devices_.at(d);
    return x.recv_cpu_s + x.recv_cpu_per_byte_s * double(bytes);
  }
  // Whether a and b cannot be told apart: the same fits, link, CPU limit
  // and memory, so every price on one is the price on the other.
  bool SameDevice(int a, int b) const;

 private:
  // A measured node: op, MACs, bytes (input + output + weights).
  using Key = std::tuple<std::string, int64_t, int64_t>;
  struct Device {
    std::map<std::string, OpFit> fits;  // "*" always present
    // The profiling database itself: a node measured on this device is
    // predicted by its measurement (mean of equal ones), the fits serve
    // the rest.
    std::map<Key, double> measured;
    LayerTable layers;  // the model's own samples, layer by layer
    Link link;
    CpuQuota quota;
    double send_cpu_s = 0, recv_cpu_s = 0;
    double send_cpu_per_byte_s = 0, recv_cpu_per_byte_s = 0;
    double idle_cpu_per_s = 0;
    // Spec-based devices only: the weights' read time per byte, on top of
    // the fit (a profile's fits measure it within per_byte_s).
    double per_weight_byte_s = 0;
    // The device's accelerator (cluster file): its layers are priced on
    // it (sim/systolic.h), whatever the fits say.
    AcceleratorSpec accelerator;
    // A named board's rates at its speed (cluster/board.h): every node is
    // priced by them (BoardNodeSeconds), whatever the fits say.
    bool board = false;
    BoardRates rates;
  };
  static void BoardMessageCosts(Device* dev);
  Cluster cluster_;
  std::vector<Device> devices_;
};

}  // namespace shoal

#endif  // SHOAL_SIM_LATENCY_MODEL_H_
