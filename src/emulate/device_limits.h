// An emulated device's limits on this host: cgroup v1 cpu and memory
// controllers holding its worker to the device's CPU share and memory,
// where the kernel offers them (`shoal cluster up`).
#ifndef SHOAL_EMULATE_DEVICE_LIMITS_H_
#define SHOAL_EMULATE_DEVICE_LIMITS_H_

#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "emulate/emulated_cluster.h"

namespace shoal {

// The device's cgroups for its cpu quota and memory limit, named for the
// cluster file `file` and the device; fills the report's notes. Returns
// their directories (the worker is moved into them, `cluster down` removes
// them).
std::vector<std::string> LimitDevice(const std::string& file,
                                     const DeviceSpec& d, DeviceUpReport* rep);

// Removes the cgroups listed one per line in `list` (what LimitDevice
// returned, kept in the cluster's state directory), waiting a little for
// each to empty, and the list itself.
void RemoveDeviceCgroups(const std::string& list);

}  // namespace shoal

#endif  // SHOAL_EMULATE_DEVICE_LIMITS_H_
