// Whether a cluster has a slow link: what `--wire-compression auto` asks
// (`shoal plan`, `shoal demo`) before it turns LZ4 on.
#ifndef SHOAL_CLUSTER_SLOW_LINK_H_
#define SHOAL_CLUSTER_SLOW_LINK_H_

#include "cluster/cluster.h"

namespace shoal {

// Whether a device's link is below 1 Gbit/s (Wi-Fi, a shaped emulation):
// there LZ4, which compresses at a few hundred MB/s even on a Pi 3, costs
// less time than the bytes it saves; `--wire-compression auto` uses it
// then. Unshaped links (loopback, --devices N) are left alone.
bool HasSlowLink(const Cluster& c);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_SLOW_LINK_H_
