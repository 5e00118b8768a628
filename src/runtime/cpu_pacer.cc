#include "runtime/cpu_pacer.h"

#include <time.h>

#include <thread>

namespace shoal {

double CpuSeconds(bool whole_process) {
  timespec ts{};
  clock_gettime(
      whole_process ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void PaceCompute(double fraction, std::chrono::steady_clock::time_point start,
                 double cpu_seconds) {
  if (fraction <= 0 || cpu_seconds <= 0) return;
  const auto until =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(cpu_seconds / fraction));
  std::this_thread::sleep_until(until);
}

bool PaceTo(std::chrono::steady_clock::time_point start, double seconds) {
  const auto until =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                  std::chrono::duration<double>(seconds));
  if (std::chrono::steady_clock::now() > until) return false;
  std::this_thread::sleep_until(until);
  return true;
}

}  // namespace shoal
