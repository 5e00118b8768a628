// The steady clock the runtime times requests and tasks with.
#ifndef SHOAL_UTIL_CLOCK_H_
#define SHOAL_UTIL_CLOCK_H_

#include <chrono>

namespace shoal {

using SteadyClock = std::chrono::steady_clock;

// Milliseconds from `t0` to now.
inline double MsSince(SteadyClock::time_point t0) {
  return std::chrono::duration<double, std::milli>(SteadyClock::now() - t0)
      .count();
}

// `s` seconds as a steady-clock duration (board times, link times and
// paces are doubles of seconds; deadlines are time points).
inline SteadyClock::duration SteadySeconds(double s) {
  return std::chrono::duration_cast<SteadyClock::duration>(
      std::chrono::duration<double>(s));
}

}  // namespace shoal

#endif  // SHOAL_UTIL_CLOCK_H_
