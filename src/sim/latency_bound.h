// The least latency any plan of a model can reach on a cluster, so that a
// plan's prediction or measurement can be told how far it is from what the
// devices allow (`shoal simulate`): every MAC computed somewhere, at best
// spread over all the devices in proportion to their rates; the input
// carried to some device; the output carried back. Activations that move
// between devices cost more still, so the bound is loose, never wrong.
#ifndef SHOAL_SIM_LATENCY_BOUND_H_
#define SHOAL_SIM_LATENCY_BOUND_H_

#include "graph/graph.h"
#include "sim/latency_model.h"
#include "util/status.h"

namespace shoal {

struct LatencyBound {
  // The model's compute with every device working on it at once, each at
  // its own rate: 1 / sum over devices of 1 / (the model's time there).
  double compute_s = 0;
  // The input over the quickest device's link (the coordinator sends it
  // as that device's worker would), and the quickest link's latency for
  // the output back.
  double input_s = 0;
  double output_s = 0;
  // The model on its fastest device alone, with its input and output.
  double one_device_s = 0;
  int fastest_device = 0;
  double total_s() const { return compute_s + input_s + output_s; }
};

// `g` shaped; `input_bytes`: the model input as it travels (a byte a value
// for pixels, else four).
StatusOr<LatencyBound> LeastLatency(const LatencyModel& m, const Graph& g,
                                    int64_t input_bytes);

}  // namespace shoal

#endif  // SHOAL_SIM_LATENCY_BOUND_H_
