// Emulated CPU speed for a worker (`--cpu-fraction F`): a task that used c
// seconds of CPU on this host is held until c / F seconds have passed since
// it started. Unlike a cgroup CPU quota alone, short tasks do not run at
// full speed on the quota left over from idle periods, and the emulated time
// does not depend on what else runs on the host.
#ifndef SHOAL_RUNTIME_CPU_PACER_H_
#define SHOAL_RUNTIME_CPU_PACER_H_

#include <chrono>

namespace shoal {

// CPU seconds used so far by the calling thread, or by the whole process
// (when kernels run on several threads).
double CpuSeconds(bool whole_process);

// Sleeps until `start` + cpu_seconds / fraction; returns at once when
// fraction <= 0 or that time has passed.
void PaceCompute(double fraction, std::chrono::steady_clock::time_point start,
                 double cpu_seconds);

// Sleeps until `start` + `seconds` (an emulated board's time for a task);
// false when that time had already passed: the host was slower than the
// board it emulates.
bool PaceTo(std::chrono::steady_clock::time_point start, double seconds);

}  // namespace shoal

#endif  // SHOAL_RUNTIME_CPU_PACER_H_
