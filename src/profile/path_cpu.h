// What a worker spends in host CPU per byte of the tensors it receives and
// sends, measured on the runtime's own path (gRPC Send, parsing, the copies
// into a task's inputs, cutting an output into a message): a one-task plan
// is deployed on the device and sent requests whose input or output is
// large, and the worker's process CPU is read before and after. On an
// emulated Pi every millisecond of host CPU is 23 ms of its time, and
// AlexNet's 602 KB input costs its input device about as much as a layer
// (docs/simulator.md). The 64 B link probes cannot tell this: their CPU
// is a message's, not its bytes'.
#ifndef SHOAL_PROFILE_PATH_CPU_H_
#define SHOAL_PROFILE_PATH_CPU_H_

#include <cstdint>
#include <memory>

#include "cluster/cluster.h"
#include "security/tls_identity.h"
#include "util/status.h"

namespace shoal {

struct PathCpuOptions {
  int64_t bytes = int64_t{1} << 20;        // of the large input / output
  int requests = 30;                       // timed, per plan, after 2 warm-ups
  int64_t timeout_ms = 300000;             // per request and per deploy
  std::string advertise;                   // CoordinatorOptions::advertise
  std::shared_ptr<const TlsIdentity> tls;  // null: plaintext
};

struct PathCpu {
  double recv_per_byte_s = 0;
  double send_per_byte_s = 0;
  // CPU the worker uses per second doing nothing (gRPC's timers and
  // pollers): under a quota it is taken from what the device can compute.
  double idle_cpu_per_s = 0;
};

// Three plans on `d` alone: a relu over 64 B (one message each way), a
// global average pool of `bytes` (a large message in, 4 B out) and a relu
// over `bytes` (large both ways). Per request, less the worker's idle CPU
// over the same wall time: receive per byte = (pool - small) / bytes, send
// per byte = (large relu - pool) / bytes; never below 0. Each plan is
// deployed beside any plan the worker serves, which is current again after
// (released on failure too); requests it serves meanwhile would be counted.
StatusOr<PathCpu> MeasurePathCpu(const DeviceSpec& d, const PathCpuOptions& o);

}  // namespace shoal

#endif  // SHOAL_PROFILE_PATH_CPU_H_
