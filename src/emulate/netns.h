// Emulated devices with real network stacks (`shoal cluster up --mode
// netns`, root only): each device gets a network namespace of its own with
// its own IP, joined to the others by veth pairs on a bridge; the bridge
// sits in one more namespace of its own (an empty firewall there: a host's
// FORWARD policy, Docker's DROP for one, does not touch it), and this host
// reaches it through one more veth pair with the subnet's .1. Each device's
// link is shaped by the kernel, htb with a bfifo queue, on both of its
// veth ends: what it sends (uplink) and what it receives (downlink); with a
// shared medium, all of it also passes one shaped channel. This
// kernel has no netem qdisc, so latency stays with the worker's transport.
#ifndef SHOAL_EMULATE_NETNS_H_
#define SHOAL_EMULATE_NETNS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "util/status.h"

namespace shoal {

struct NetnsDevice {
  std::string name;          // for messages
  std::string ip;            // its address in the subnet
  double bandwidth_bps = 0;  // 0: not shaped
};

struct NetnsLayout {
  std::string tag;                     // 8 hex digits naming every interface
  std::string subnet;                  // "10.77.3.0/24"
  std::string host_ip;                 // this host's address on it (.1)
  std::string bridge_ns;               // the namespace holding the bridge
  std::vector<std::string> device_ns;  // per device
};

// OK where namespaces, veth pairs, bridges and htb can be made here (root,
// iproute2, the kernel's modules); else why not, and what to do.
Status NetnsAvailable();

// Checks a device address for --mode netns: an IPv4 literal in a private
// range (10/8, 172.16/12, 192.168/16), in one /24 with the others, not the
// subnet's .0, .1 or .255. Returns the /24 as "a.b.c.0/24".
StatusOr<std::string> NetnsSubnetOf(const std::vector<NetnsDevice>& devs);

// Creates the namespaces, links and shaping for `devs`, named by `tag`
// (the cluster file's hash). Refuses a subnet that an interface of this
// host already uses (a real network). Anything left from an earlier run of
// the same tag is removed first. `medium_bps` > 0: the devices share one
// radio channel of that rate (cluster/cluster.h Medium): all traffic into
// the bridge goes through one ifb device shaped at half of it, as each
// frame takes the channel twice (up to the access point and down).
StatusOr<NetnsLayout> NetnsUp(const std::string& tag,
                              const std::vector<NetnsDevice>& devs,
                              double medium_bps = 0);

// Removes what NetnsUp made for `tag` (best effort; errors are returned
// after everything was tried).
Status NetnsDown(const std::string& tag, int devices);

// The namespace of device `i` of `tag`, and its file for setns(2).
std::string NetnsName(const std::string& tag, int i);
std::string NetnsPath(const std::string& name);

// Runs argv (no shell) and returns its stderr in the error when it fails.
Status RunTool(const std::vector<std::string>& argv);

}  // namespace shoal

#endif  // SHOAL_EMULATE_NETNS_H_
