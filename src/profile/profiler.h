// `shoal profile`'s engine: asks every device's worker to time each layer
// variant of a model (Profile RPC, under the worker's own CPU limits) and to
// send 64 B and a large message to a peer through its shaped link
// (ProbeLink), then fits each device's regressions (sim/fit.h).
#ifndef SHOAL_PROFILE_PROFILER_H_
#define SHOAL_PROFILE_PROFILER_H_

#include <functional>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "security/tls_identity.h"
#include "sim/profile.h"
#include "sim/profile_variants.h"
#include "util/status.h"

namespace shoal {

struct ProfileProgress {
  std::string device;
  int done = 0, total = 0;  // of this device's measurements
  std::string what;         // "conv2 lop 1/4", "link"
  double seconds = 0;       // what it measured
};

struct ProfilerOptions {
  std::string model;  // recorded in each sample
  // When set: after its variants, each device runs this whole graph once
  // more with per-node timing, and each whole layer's sample becomes its
  // time in context (LayerSample::alone_seconds keeps the time alone).
  const Graph* graph = nullptr;
  int repeat = 3;  // timed runs per variant at least, in each round
  // Each variant (and the whole model) is timed in this many rounds, one
  // after another, and its time is the median of the rounds'.
  int rounds = 3;
  // Each variant also runs for at least this long, so that a CPU quota's
  // throttling is averaged over many periods.
  double min_seconds = 0.2;
  double max_seconds = 10;
  int64_t rpc_timeout_ms = 300000;  // one variant (build + runs) or probe
  int64_t large_bytes = int64_t{1} << 20;
  int small_probes = 31, large_probes = 7;
  // CPU per 64 B message: a probe of `message_probes` less a probe of one,
  // over message_probes - 1, in `message_rounds` pairs, median. On a Pi 3
  // of mixed.yaml three pairs of 31 gave 0.57-0.76 ms to send, three of 100
  // 0.62-0.66 (the worker takes at most 100 a probe).
  int message_probes = 100, message_rounds = 3;
  // After the links: each worker's CPU per byte received and sent, through
  // one-task plans deployed on it (profile/path_cpu.h).
  bool path_cpu = true;
  uint64_t seed = 1;
  // Where a lone device's link probes reach this process, and the
  // path-CPU plans reply: CoordinatorOptions::advertise.
  std::string advertise;
  std::function<void(const ProfileProgress&)> progress;  // any thread
  // Mutual TLS to the workers and on the lone device's probe endpoint;
  // null: the cluster's `tls` block, loaded by ProfileCluster, or plaintext.
  std::shared_ptr<const TlsIdentity> tls;
};

// A device's link from its probes: the seconds of each 64 B message and of
// each `large_bytes` one, less `message_cpu_s` (the CPU both ends paid per
// message, which the simulator charges to the devices). `throttled`: either
// end runs under a CPU quota below a core, whose waits the probes met too
// and the simulator adds itself; then the lower quartile stands for the
// link, else the median.
Link LinkFromProbes(const std::vector<double>& small,
                    const std::vector<double>& large, int64_t large_bytes,
                    double message_cpu_s, bool throttled);

// Progress steps of one device: its variants and whole model, each round,
// then its link (ProfileProgress::total).
int ProfileStepsPerDevice(size_t variants, const ProfilerOptions& o);

// Every device in parallel for the layers, then the links one device at a
// time (so that no probe waits behind a busy peer). An unreachable device
// fails the whole profile, naming it.
StatusOr<Profile> ProfileCluster(const Cluster& c,
                                 const std::vector<LayerVariant>& variants,
                                 const ProfilerOptions& o);

}  // namespace shoal

#endif  // SHOAL_PROFILE_PROFILER_H_
