#include "runtime/link_shaper.h"

#include <thread>

namespace shoal {

void LinkShaper::Transmit(int64_t bytes) {
  if (!active()) return;
  using namespace std::chrono;
  const auto now = steady_clock::now();
  steady_clock::time_point done;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto start = std::max(now, free_at_);
    const double tx_s =
        link_.bandwidth_bps > 0 ? bytes * 8.0 / link_.bandwidth_bps : 0.0;
    free_at_ =
        start + duration_cast<steady_clock::duration>(duration<double>(tx_s));
    done = free_at_;
  }
  done +=
      duration_cast<steady_clock::duration>(duration<double>(link_.latency_s));
  std::this_thread::sleep_until(done);
}

}  // namespace shoal
