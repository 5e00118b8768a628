// The least latency any plan of a model can reach on a cluster, so that a
// plan's prediction or measurement can be told how far it is from what the
// devices allow (`shoal simulate`). Every MAC is computed somewhere, each
// device at its own rate; the coordinator hands the input to one device,
// the input device, over no link (as the runtime and the simulator do), and
// every other device gets its first byte through the input device's link,
// one latency after the request starts at the earliest. Its result leaves
// over its own link, one latency before the request ends, unless it is the
// output device.
//
// A second bound follows the model's dependencies. Each part of a layer a
// device computes is a step that pays the layer's fixed cost (a board's
// step: threads woken, caches cold) and starts once the parts it reads are
// done, since every plan shoal makes runs a task's layers as whole steps
// (rows are not handed on in chunks). So along the model's heaviest chain
// of layers each layer costs at least its least fixed cost plus its
// arithmetic shared by every device at once; and a chain that leaves one
// device pays at least one message: a link's latency and the least CPU a
// send and a receive take. The bound is the larger of the two. Bytes and
// recomputed halos cost more still, so it is loose, never wrong for such
// plans.
#ifndef SHOAL_SIM_LATENCY_BOUND_H_
#define SHOAL_SIM_LATENCY_BOUND_H_

#include <vector>

#include "graph/graph.h"
#include "sim/latency_model.h"
#include "util/status.h"

namespace shoal {

struct LatencyBound {
  // What no plan beats: the larger of the shared bound (the least T such
  // that the devices, each working only within its window of the request's
  // T seconds, can compute the whole model between them; the input and
  // output devices chosen as best) and the chain bound (above). At most
  // one_device_s.
  double least_s = 0;
  double shared_s = 0;  // the shared bound alone
  // The model's compute with every device working on it for the whole
  // request at its own rate: 1 / sum over devices of 1 / (the model's time
  // there). shared_s less this is what the links' latencies cost at least.
  double compute_s = 0;
  // The input device of the shared bound and its link's latency: how late
  // every other device starts.
  int input_device = 0;
  double input_latency_s = 0;
  // The model on its fastest device alone (no link: the input and output
  // stay with it).
  double one_device_s = 0;
  int fastest_device = 0;
  // The chain bound (above): the heaviest chain's layers, each at its least
  // fixed cost plus its arithmetic spread over every device (chain_s), and
  // of that the fixed costs (chain_fixed_s) over chain_steps layers that pay
  // one; chain_message_s is the one message a chain leaving its device
  // pays. The chain on one device is no better than that device alone.
  double chain_s = 0;
  double chain_fixed_s = 0;
  int chain_steps = 0;
  double chain_message_s = 0;
  double total_s() const { return least_s; }
};

// The least T at which devices of the model times `seconds`, device d
// working from `start[d]` to T less `end[d]`, compute one model between
// them (the model divisible among them at will): +inf when no device has
// a model time. Exposed for the test.
double LeastSharedTime(const std::vector<double>& seconds,
                       const std::vector<double>& start,
                       const std::vector<double>& end);

// `g` shaped.
StatusOr<LatencyBound> LeastLatency(const LatencyModel& m, const Graph& g);

}  // namespace shoal

#endif  // SHOAL_SIM_LATENCY_BOUND_H_
