// What each device's uplink carries when a chain runs under given schemes
// the way shoal's plans run it, rather than the papers' way: partial sums
// (LIP, FUSE2) are reduce-scattered among the devices, a layer split by
// outputs (LOP, FUSE1) gathers its input from the devices that hold its
// slices, the hub sends only what it alone holds (the model input, the
// output of a layer run whole) and receives the last layer's output. Every
// send is counted as a direct message from the device that holds the data
// (a broadcast tree moves the same bytes into each device but spreads the
// sending over its relays; a tensor every device reads is charged to the
// devices that send it in the plan's broadcast trees, plan/broadcast.h).
// The link time, each layer's busiest uplink summed over the layers, is
// what `fuse-ilp` minimises by default (docs/fuse-ilp.md).
#ifndef SHOAL_PARTITION_LINK_LOAD_H_
#define SHOAL_PARTITION_LINK_LOAD_H_

#include <cstdint>
#include <vector>

#include "partition/chain.h"
#include "partition/paper_cost.h"
#include "partition/scheme.h"
#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

// Layer i's loads per device, one vector per case; LayerLinkLoad adds up
// the cases a pair of schemes makes, and the fusion ILP weighs the same
// vectors with its variables. "After parts": the previous layer ran LOP,
// LIP or FUSE2, so its output is in channel slices on the devices.
struct LayerLinkTerms {
  // LOP or FUSE1 after parts: every device sends its slice of the input to
  // every other; the hub also sends the part of the input no slice holds.
  std::vector<int64_t> gather;
  // LOP or FUSE1 otherwise: the hub sends the whole input to every device.
  std::vector<int64_t> broadcast;
  // LIP after parts: the hub sends the other devices their input slices of
  // what no slice holds; otherwise all of their slices.
  std::vector<int64_t> lip_after_parts;
  std::vector<int64_t> lip_from_hub;
  // Whole (on the hub) after parts: every slice to the hub.
  std::vector<int64_t> whole_after_parts;
  // LIP or FUSE2: the partial sums, reduce-scattered.
  std::vector<int64_t> reduce;
  // The last layer's output to the hub: LOP slices, or summed slices.
  std::vector<int64_t> out_lop;
  std::vector<int64_t> out_sums;
  // Messages one after the other: a broadcast tree's depth, and whether
  // LIP after parts exchanges anything.
  int tree_depth = 0;
  bool lip_after_parts_moves = false;
};

LayerLinkTerms LayerLinkLoadTerms(const std::vector<ChainLayer>& chain,
                                  const std::vector<LayerParts>& parts,
                                  size_t i, int devices, int hub,
                                  const BroadcastSettings& broadcast);

// How many times each of `devices` devices sends a tensor that device `src`
// broadcasts to all the others, as plans with `broadcast` send it
// (plan/broadcast.h: trees of its fan-out, 0 one message from src to each;
// scattered, src once and every receiver its share of the chunks to the
// others, a fraction of the tensor), and how many messages deep the tree
// is.
struct BroadcastShape {
  std::vector<double> sends;
  int depth = 0;
};
BroadcastShape BroadcastSends(int devices, int src,
                              const BroadcastSettings& broadcast);

// How many messages one after the other layer i's transfers take under
// (prev, scheme): a broadcast tree its depth, any other exchange one.
// `t`: LayerLinkLoadTerms of layer i of a chain of `layers`.
int LayerLinkSteps(const LayerLinkTerms& t, size_t i, size_t layers,
                   Scheme prev, Scheme scheme);

// Whether a layer under `prev` leaves its output in slices on the devices.
bool LeavesParts(Scheme prev);

// Elements each device sends for layer i's input when the previous layer
// ran under `prev` (ignored for i = 0: the input is on the hub) and layer i
// runs under `scheme`, plus what layer i's partial sums and, for the last
// layer, its output to the hub add; `t` is LayerLinkLoadTerms of layer i
// of a chain of `layers`, and `scheme` must fit the layer
// (CheckSchemeFits). One entry per device.
std::vector<int64_t> LayerLinkLoad(const LayerLinkTerms& t, size_t i,
                                   size_t layers, Scheme prev, Scheme scheme);

// The sum of LayerLinkLoad over the chain: elements per device uplink.
StatusOr<std::vector<int64_t>> ChainLinkLoads(
    const std::vector<ChainLayer>& chain, const std::vector<Scheme>& schemes,
    const std::vector<double>& shares, int hub,
    const BroadcastSettings& broadcast);

// What one element on device d's link costs in element-times of the
// fastest link: fastest rate / d's rate (0 for an unlimited link, rate <= 0;
// all 1 when `rates` is empty or none is known).
std::vector<double> LinkTimeScales(const std::vector<double>& rates,
                                   size_t devices);

// The busiest uplink's time in element-times of the fastest link: the max
// over devices of load * LinkTimeScales. `rates`: per device, bits per second.
double BusiestLinkTime(const std::vector<int64_t>& loads,
                       const std::vector<double>& rates);

// The link time of a chain: BusiestLinkTime of each layer's LayerLinkLoad
// plus its LayerLinkSteps times `step_cost` (a message's latency in
// element-times of the fastest link), summed over the layers. One
// request's layers run one after the other, each waiting for its slowest
// transfer, so this, not the busiest total, is what a request waits for
// links.
StatusOr<double> ChainLinkTime(const std::vector<ChainLayer>& chain,
                               const std::vector<Scheme>& schemes,
                               const std::vector<double>& shares, int hub,
                               const BroadcastSettings& broadcast,
                               const std::vector<double>& rates,
                               double step_cost);

// A latency in element-times (float32) of the fastest of `rates` (bits per
// second); 0 when no rate is known.
double StepCost(double latency_s, const std::vector<double>& rates);

}  // namespace shoal

#endif  // SHOAL_PARTITION_LINK_LOAD_H_
