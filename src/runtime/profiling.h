// The worker's side of `shoal profile`: timing one graph fragment with the
// engine on random weights and inputs, and reading the CPU limit the worker
// itself runs under (so an emulated device reports its cgroup quota).
#ifndef SHOAL_RUNTIME_PROFILING_H_
#define SHOAL_RUNTIME_PROFILING_H_

#include <string>
#include <vector>

#include "cluster/cpu_quota.h"
#include "engine/executor.h"
#include "graph/graph.h"
#include "util/status.h"

namespace shoal {

struct TimingOptions {
  uint64_t seed = 1;
  int min_runs = 3;
  double min_seconds = 0.2;
  double max_seconds = 10;
  int threads = 1;
  Backend backend = kDefaultBackend;
  // The worker's pacing (WorkerOptions::cpu_fraction): each run is held to
  // its CPU time / fraction, as the worker holds each task.
  double cpu_fraction = 0;
  // An emulated board (WorkerOptions::board): each run is held to this
  // many seconds of host time, the class's time for the graph stretched
  // by the cluster's dilation, as the worker holds each task, instead of
  // being paced by cpu_fraction. Negative: no board.
  double hold_seconds = -1;
  // Times are reported divided by this: board time on a dilated cluster.
  double dilation = 1;
  // Also time each step of the runs and attribute it to the graph's nodes
  // (Timing::node_seconds).
  bool per_node = false;
};

// One node's time inside the graph it ran in.
struct NodeTime {
  std::string node;
  double seconds = 0;  // its share of seconds_mean
};

struct Timing {
  int64_t runs = 0;
  double seconds_mean = 0;  // wall time per run, over the timed window
  double seconds_median = 0;
  double seconds_min = 0;
  // CPU time per run as the worker's pacing counts it for a task: the
  // computing thread's, or the process's when kernels use several threads
  // (not the idle gRPC threads', which the profile measures apart).
  double cpu_seconds_mean = 0;
  double cpu_seconds_median = 0;  // the median run's (robust to a few slow)
  // per_node: every node of the graph, in graph order. Each executor step's
  // CPU time goes to its node; a reorder step to the node it feeds (the
  // next computing step), a trailing one to the node before it; an
  // activation fused into its conv ("conv+Relu") is the conv's and gets 0.
  // Scaled so that they sum to seconds_mean (the wall time, which includes
  // the pacing and the quota): each node gets its share of the run's CPU.
  std::vector<NodeTime> node_seconds;
};

// The per-node attribution of step times (labels: node names or "reorder
// <tensor>"), as TimeGraph does it; exposed for tests.
std::vector<NodeTime> AttributeSteps(const Graph& g,
                                     const std::vector<std::string>& labels,
                                     const std::vector<double>& seconds,
                                     double total_seconds);

// One warm-up run, then runs back to back until both min_runs and
// min_seconds are reached (or max_seconds passed).
StatusOr<Timing> TimeGraph(const Graph& g, const TimingOptions& o);

// This process's cgroup CPU limit (v1 cpu.cfs_quota_us / cfs_period_us, or
// v2 cpu.max); not limited when there is none or it cannot be read.
CpuQuota OwnCpuQuota();

}  // namespace shoal

#endif  // SHOAL_RUNTIME_PROFILING_H_
