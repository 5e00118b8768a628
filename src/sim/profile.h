// The profiling database (the collaborative-execution paper's Step 1): per
// device, measured layer latencies and a regression fitted to them, so that
// layers never measured can be predicted; per device, its measured link.
// Written by `shoal profile`, read by the planner and the simulator.
#ifndef SHOAL_SIM_PROFILE_H_
#define SHOAL_SIM_PROFILE_H_

#include <map>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/cpu_quota.h"
#include "util/status.h"

namespace shoal {

// One measured layer (or split variant of a layer) on one device.
struct LayerSample {
  std::string model;    // where it came from, for people
  std::string layer;    // node name
  std::string variant;  // "whole", "lop 1/4", ...
  std::string op;       // op type: Conv, Gemm, MaxPool, ...
  int64_t macs = 0;
  int64_t bytes = 0;  // input + output + weight bytes
  // Time per run on the device when busy (runs back to back, so a CPU
  // quota's throttling is averaged in), and the CPU time it used.
  double seconds = 0;
  double cpu_seconds = 0;  // 0: not measured
  // A whole layer timed inside the whole model (per-step times of the
  // executor): `seconds` and `cpu_seconds` are its share of the model's
  // run, and these the layer timed alone as a one-node graph (which
  // reorders its input and output to and from oneDNN's blocked layout).
  // 0: measured alone only.
  double alone_seconds = 0;
  double alone_cpu_seconds = 0;
};

// A sample's time on its device as the simulator counts it. Under a CPU
// quota a wall time holds whole throttled periods (a fragment needing 1.4
// ms of CPU on a 1 ms quota takes two periods, or three, by where it
// starts), so it is the sample's CPU / the quota's fraction: what the
// worker paces a task to; the simulator's QuotaClock adds the throttling a
// task really meets. Without a quota (or without CPU measured), `seconds`.
double PacedSeconds(const LayerSample& s, const CpuQuota& q);
// The same for the layer timed alone (0 when it was not).
double PacedAloneSeconds(const LayerSample& s, const CpuQuota& q);

// In-model per-node times (the worker's shares of one whole-model run,
// which sum to its wall time `model_seconds` and in CPU to
// `model_cpu_seconds`) onto the whole-layer samples of `samples`: each one
// timed alone keeps that as alone_*, and takes its share of the model's
// wall and CPU time. Its CPU comes from the model's CPU, not from the
// ratio of wall times, which under a quota move by whole periods.
void ApplyInModelTimes(const std::map<std::string, double>& node_seconds,
                       double model_seconds, double model_cpu_seconds,
                       std::vector<LayerSample>* samples);

// seconds = intercept_s + per_mac_s * macs + per_byte_s * bytes, fitted by
// least squares (non-negative) to the samples of one op class.
struct OpFit {
  double intercept_s = 0;
  double per_mac_s = 0;
  double per_byte_s = 0;
  int samples = 0;
};

struct DeviceProfile {
  std::string name;  // as in the cluster file
  std::vector<LayerSample> samples;
  // Key: op type, or "*" for the fit over every sample (used for op types
  // never measured on this device).
  std::map<std::string, OpFit> fits;
  Link link;  // measured: bandwidth of a large message, latency of 64 B
  // Host CPU seconds one message costs this device's worker to send and to
  // receive (gRPC, serialising), measured with 64 B probes; the
  // simulator charges them to the device's CPU quota. The link's latency
  // above excludes them. 0: not measured (older files).
  double send_cpu_s = 0;
  double recv_cpu_s = 0;
  // And per byte (copies, serialising, gRPC's framing), measured on the
  // runtime's own path: requests of 1 MiB through a one-task plan on the
  // device (profile/path_cpu.h). 0: not measured.
  double send_cpu_per_byte_s = 0;
  double recv_cpu_per_byte_s = 0;
  // Host CPU seconds per second the idle worker uses (gRPC's timers and
  // pollers), measured with the per-byte CPU; under a CPU quota the
  // simulator takes it from the quota. 0: not measured.
  double idle_cpu_per_s = 0;
  // The worker's own cgroup CPU limit, as it reported it (`shoal cluster
  // up`); absent from older files.
  bool has_cpu_quota = false;
  CpuQuota cpu_quota;
  // The fraction of a core the worker paced its compute to (`cluster up`
  // derives it from the device's `speed`), below the cgroup's quota, which
  // also lets gRPC's threads run; 0: none (absent from older files).
  double cpu_pace = 0;
};

// The CPU limit the device's compute runs under: its cgroup quota, or, where
// the worker paces compute to less, that pace (over the quota's period).
// PacedSeconds of a sample under it is the time a task takes there.
CpuQuota ComputeQuota(const DeviceProfile& d);

struct Profile {
  int version = 1;
  std::vector<DeviceProfile> devices;
  const DeviceProfile* Find(const std::string& name) const;
};

StatusOr<Profile> LoadProfile(const std::string& path);
Status SaveProfile(const Profile& p, const std::string& path);

}  // namespace shoal

#endif  // SHOAL_SIM_PROFILE_H_
