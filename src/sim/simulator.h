// A discrete-event simulation of a Plan on a cluster: what `shoal bench`
// would measure, predicted from a LatencyModel (docs/simulator.md). It runs
// the workers' dataflow (plan/dataflow.h) on a simulated clock: each device
// computes one ready task at a time in the workers' order, hands its outputs
// on in their order (broadcasts down their trees, chunk by chunk), through a
// FIFO served by its sender threads over its uplink (transmissions
// serialised at the link's bandwidth, then its latency); replicas serve
// requests round robin, and K clients keep K requests in flight.
#ifndef SHOAL_SIM_SIMULATOR_H_
#define SHOAL_SIM_SIMULATOR_H_

#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan/trace.h"
#include "sim/latency_model.h"
#include "util/status.h"

namespace shoal {

struct SimOptions {
  int requests = 20;
  int concurrency = 1;
  // Model emulated devices' cgroup CPU quota (LatencyModel::Quota): short
  // tasks run at host speed until the period's quota is spent.
  bool cpu_quota = true;
  // Messages a device sends at once (the worker's sender threads).
  int sender_threads = 8;  // as a worker has (WorkerSender::kThreads)
  uint64_t seed = 1;       // phases of the devices' quota periods
  bool trace = false;      // record SimResult::spans
};

struct SimTaskResult {
  int task = 0;
  int64_t runs = 0;
  double compute_ms_median = 0;
};

struct SimDeviceResult {
  std::string name;
  double compute_ms_median = 0;      // sum over its tasks of their median
  std::vector<SimTaskResult> tasks;  // those that ran here, by task id
  double busy_ms = 0;
  double elapsed_ms = 0;
  double wait_ms_total = 0;  // a task's first input to its last, summed
  int64_t task_runs = 0;
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  std::vector<int64_t> queue_histogram;  // [k]: became ready with k ready
};

struct SimResult {
  std::vector<double> latency_ms;        // per request, in request order
  double wall_s = 0;                     // first request sent to last answer
  std::vector<SimDeviceResult> devices;  // per plan device
  int64_t bytes_total = 0;
  // With a shared medium: the seconds messages held the channel, in all.
  double medium_busy_s = 0;
  int64_t events = 0;
  // With SimOptions::trace: every request, task run and message, as
  // `shoal bench --trace` records them (plan/trace.h).
  std::vector<TraceSpan> spans;
};

// Which model device (index into m.cluster()) serves each plan device: by
// name, or by position when the plan names none of them and counts agree
// (as the coordinator matches them).
StatusOr<std::vector<int>> MapPlanDevices(const Plan& p, const Cluster& c);

// Requests are numbered 1..N as `shoal bench` numbers them (replica r mod
// n). The plan must verify.
StatusOr<SimResult> Simulate(const Plan& p, const LatencyModel& m,
                             const SimOptions& opts);

// Requests per second with k in flight once the pipeline is full: k over
// the mean latency of requests n/4 .. n-k-1 (Little's law), leaving out the
// first, which meet idle devices, and the last k, which run with fewer in
// flight. Requests over wall time when that leaves fewer than 4.
double SteadyThroughput(const SimResult& r, int concurrency);

}  // namespace shoal

#endif  // SHOAL_SIM_SIMULATOR_H_
