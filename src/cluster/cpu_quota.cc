#include "cluster/cpu_quota.h"

#include <algorithm>
#include <cmath>

namespace shoal {

int64_t QuotaPeriodUs(double cpu) {
  if (cpu <= 0) return 0;
  return std::max<int64_t>(20000, static_cast<int64_t>(std::ceil(1000 / cpu)));
}

int64_t QuotaUs(double cpu) {
  if (cpu <= 0) return 0;
  return static_cast<int64_t>(std::llround(cpu * QuotaPeriodUs(cpu)));
}

CpuQuota QuotaForCpu(double cpu) {
  CpuQuota q;
  if (cpu <= 0) return q;
  q.period_s = QuotaPeriodUs(cpu) * 1e-6;
  q.quota_s = QuotaUs(cpu) * 1e-6;
  return q;
}

double QuotaClock::Run(double start_s, double cpu_s) {
  if (!q_.limited() || q_.quota_s >= q_.period_s) return start_s + cpu_s;
  const double p = q_.period_s, q = q_.quota_s;
  // Below this, a remainder is rounding noise, not work.
  constexpr double kEps = 1e-12;
  int64_t k = static_cast<int64_t>(std::floor((start_s - phase_) / p));
  if (k < period_) k = period_;  // a start on a boundary, rounded down
  double t = std::max(start_s, phase_ + k * p);
  while (true) {
    if (k != period_) {
      period_ = k;
      used_ = 0;
    }
    const double end = phase_ + (k + 1) * p;
    const double can = std::max(0.0, std::min(q - used_, end - t));
    if (cpu_s <= can + kEps) {
      used_ += cpu_s;
      return t + cpu_s;
    }
    cpu_s -= can;
    used_ += can;
    ++k;
    t = end;
    // Whole periods at once: each gives the full quota.
    const int64_t full = static_cast<int64_t>(std::floor(cpu_s / q));
    if (full > 1) {
      k += full - 1;
      t = phase_ + k * p;
      cpu_s -= (full - 1) * q;
    }
  }
}

}  // namespace shoal
