// Where a run's time goes, by op: an executor's steps grouped by the op of
// the node each computes (reorders between layouts are a kind of their
// own), split by the kernel that runs them, and the slowest steps. `shoal
// infer --profile` prints it; it is how a slow model shows which op costs
// the time.
#ifndef SHOAL_ENGINE_OP_PROFILE_H_
#define SHOAL_ENGINE_OP_PROFILE_H_

#include <string>
#include <vector>

#include "graph/graph.h"

namespace shoal {

struct OpProfileRow {
  std::string op;  // "Conv", "Conv+Relu" (activation fused), "reorder"
  // "onednn", "xnnpack" or "reference", or what the caller named it
  // (infer: "xnnpack qc8" for an XNNPACK int8 layer)
  std::string kernel;
  bool reference = false;  // run by the reference kernel
  int steps = 0;
  double seconds = 0;  // per run
};

struct StepProfileRow {
  std::string label;  // the executor's step label (a node name)
  std::string op;
  std::string kernel;
  bool reference = false;
  double seconds = 0;  // per run
};

struct OpProfile {
  double total_seconds = 0;           // sum of the steps, per run
  std::vector<OpProfileRow> ops;      // slowest first
  std::vector<StepProfileRow> steps;  // slowest first
};

// `seconds` holds each step's time summed over `runs` runs (Executor::Run's
// step_seconds); `labels` and `kernels` are the executor's (step_labels(),
// step_kernels()).
OpProfile ProfileByOp(const Graph& g, const std::vector<std::string>& labels,
                      const std::vector<std::string>& kernels,
                      const std::vector<double>& seconds, int runs);

// A table of the ops, then the `top_steps` slowest steps.
std::string OpProfileText(const OpProfile& p, int top_steps);

}  // namespace shoal

#endif  // SHOAL_ENGINE_OP_PROFILE_H_
