// An emulated network link applied to what a process sends: a token bucket
// at the link's bandwidth (messages queue behind each other) plus its
// one-way latency. User space, so it needs no root and no tc.
#ifndef SHOAL_RUNTIME_LINK_SHAPER_H_
#define SHOAL_RUNTIME_LINK_SHAPER_H_

#include <chrono>
#include <mutex>

#include "cluster/cluster.h"

namespace shoal {

class LinkShaper {
 public:
  explicit LinkShaper(Link link) : link_(link) {}
  bool active() const { return link_.bandwidth_bps > 0 || link_.latency_s > 0; }
  // Blocks the caller until `bytes` would have crossed the link: behind the
  // bytes already queued, then the latency.
  void Transmit(int64_t bytes);

 private:
  Link link_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point free_at_{};
};

}  // namespace shoal

#endif  // SHOAL_RUNTIME_LINK_SHAPER_H_
