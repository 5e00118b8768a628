#include "cluster/slow_link.h"

namespace shoal {

bool HasSlowLink(const Cluster& c) {
  for (const auto& d : c.devices) {
    if (d.link.bandwidth_bps > 0 && d.link.bandwidth_bps < 1e9) return true;
  }
  return false;
}

}  // namespace shoal
