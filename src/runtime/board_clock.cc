#include "runtime/board_clock.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <string>

namespace shoal {

using Clock = std::chrono::steady_clock;

uint64_t SteadyClockId() {
  static const uint64_t id = [] {
    std::ifstream f("/proc/sys/kernel/random/boot_id");
    std::string boot;
    if (!std::getline(f, boot) || boot.empty()) return uint64_t{0};
    const uint64_t h = std::hash<std::string>{}(boot);
    return h == 0 ? uint64_t{1} : h;
  }();
  return id;
}

void StampBoardReady(Clock::time_point ready, rpc::TensorMessage* m) {
  const uint64_t clock = SteadyClockId();
  if (clock == 0) return ClearBoardReady(m);
  m->set_board_ready_ns(std::chrono::duration_cast<std::chrono::nanoseconds>(
                            ready.time_since_epoch())
                            .count());
  m->set_clock_id(clock);
}

void ClearBoardReady(rpc::TensorMessage* m) {
  m->clear_board_ready_ns();
  m->clear_clock_id();
}

Clock::time_point BoardArrival(const rpc::TensorMessage& m,
                               Clock::time_point received) {
  if (m.board_ready_ns() == 0 || m.clock_id() == 0 ||
      m.clock_id() != SteadyClockId()) {
    return received;
  }
  const Clock::time_point ready(std::chrono::duration_cast<Clock::duration>(
      std::chrono::nanoseconds(m.board_ready_ns())));
  const int64_t limit_ms =
      std::clamp<int64_t>(m.timeout_ms(), 0, int64_t{60} * 1000);
  return std::min(ready, received + std::chrono::milliseconds(limit_ms));
}

}  // namespace shoal
