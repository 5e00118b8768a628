// An emulated cluster on this machine (`shoal cluster up/down`, `shoal
// demo`): one `shoal worker` process per device, each held to its device's
// CPU share and memory with cgroup v1 controllers where they can be used.
// Two modes for the network: `transport`, every worker on 127.0.0.1 and its
// link shaped by the worker's own transport (no privileges needed); and
// `netns` (root), every worker in a network namespace of its own with its
// own IP and its link's bandwidth shaped by the kernel (emulate/netns.h).
#ifndef SHOAL_EMULATE_EMULATED_CLUSTER_H_
#define SHOAL_EMULATE_EMULATED_CLUSTER_H_

#include <ostream>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "util/status.h"

namespace shoal {

struct ClusterUpOptions {
  // The `shoal` binary to run as `shoal worker` (default: this process's
  // own executable).
  std::string binary;
  // The workers get SIGTERM when the thread that started them ends, so a
  // killed `shoal demo` leaves nothing behind (`cluster up` leaves them).
  bool die_with_parent = false;
  std::string mode = "transport";  // or "netns"
  // Measure the host again instead of using its kept calibration.
  bool recalibrate = false;
  // Stretch every emulated time by this factor (`--dilation`; 0: chosen
  // from the host's calibration when the cluster names boards, else 1).
  double dilation = 0;
};

// What `up` applied to one device.
struct DeviceUpReport {
  std::string name;
  int pid = 0;
  bool already_running = false;
  // false: cgroups unavailable or no cpu field (a named board is paced by
  // its class's times: true)
  bool cpu_limited = false;
  bool memory_limited = false;  // false: only the worker's own budget
  std::string cpu_note, memory_note;
};

// Logs and pid files of the cluster file `file`.
std::string ClusterStateDir(const std::string& file);
// The 8 hex digits in the names of its cgroups, namespaces and interfaces.
std::string ClusterTag(const std::string& file);

// Starts the workers that are not running yet and waits until each answers.
// Prints a line per device to `out`. Fails naming the device and its log.
StatusOr<std::vector<DeviceUpReport>> ClusterUp(const std::string& file,
                                                const ClusterUpOptions& opts,
                                                std::ostream& out);

// Stops the workers (SIGTERM, SIGKILL after 5 s) and removes the cgroups.
// With `purge`, also removes the cluster's state directory: logs, pids and
// the devices' weight caches (which a plain `down` keeps for the next `up`).
Status ClusterDown(const std::string& file, std::ostream& out,
                   bool purge = false);

}  // namespace shoal

#endif  // SHOAL_EMULATE_EMULATED_CLUSTER_H_
