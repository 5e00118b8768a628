// The least latency any plan of a model can reach on a cluster, so that a
// plan's prediction or measurement can be told how far it is from what the
// devices allow (`shoal simulate`). Every MAC is computed somewhere, each
// device at its own rate; the coordinator hands the input to one device,
// the input device, over no link (as the runtime and the simulator do), and
// every other device gets its first byte through the input device's link,
// one latency after the request starts at the earliest. Its result leaves
// over its own link, one latency before the request ends, unless it is the
// output device. Bytes, the messages' CPU and recomputed halos cost more
// still, so the bound is loose, never wrong.
#ifndef SHOAL_SIM_LATENCY_BOUND_H_
#define SHOAL_SIM_LATENCY_BOUND_H_

#include <vector>

#include "graph/graph.h"
#include "sim/latency_model.h"
#include "util/status.h"

namespace shoal {

struct LatencyBound {
  // What no plan beats: the least T such that the devices, each working
  // only within its window of the request's T seconds (above), can compute
  // the whole model between them; the input and output devices chosen as
  // best. At most one_device_s.
  double least_s = 0;
  // The model's compute with every device working on it for the whole
  // request at its own rate: 1 / sum over devices of 1 / (the model's time
  // there). least_s less this is what the links' latencies cost at least.
  double compute_s = 0;
  // The input device of the least_s above and its link's latency: how late
  // every other device starts.
  int input_device = 0;
  double input_latency_s = 0;
  // The model on its fastest device alone (no link: the input and output
  // stay with it).
  double one_device_s = 0;
  int fastest_device = 0;
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
