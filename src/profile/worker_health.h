// A worker's Health reply, for the profiler and its path-CPU plans: whether
// it answers (within 3 s, naming the device if not) and the process CPU it
// has used so far, which is how both read what a probe or a request cost.
#ifndef SHOAL_PROFILE_WORKER_HEALTH_H_
#define SHOAL_PROFILE_WORKER_HEALTH_H_

#include "cluster/cluster.h"
#include "runtime/wire.h"
#include "util/status.h"

namespace shoal {

StatusOr<rpc::HealthReply> WorkerHealth(const DeviceSpec& d,
                                        rpc::Worker::Stub* stub);

// Its `process_cpu_seconds`.
StatusOr<double> WorkerProcessCpu(const DeviceSpec& d, rpc::Worker::Stub* stub);

}  // namespace shoal

#endif  // SHOAL_PROFILE_WORKER_HEALTH_H_
