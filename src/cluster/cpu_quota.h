// The CPU bandwidth limit of an emulated device (`shoal cluster up` puts each
// worker in a cgroup with cpu.cfs_quota_us / cpu.cfs_period_us), and how long
// work takes under it: the kernel lets the group run `quota` of CPU time per
// `period`, then throttles it until the next period starts. A short task on
// an idle device runs at full host speed; a long one at quota/period of it.
#ifndef SHOAL_CLUSTER_CPU_QUOTA_H_
#define SHOAL_CLUSTER_CPU_QUOTA_H_

#include <cstdint>

namespace shoal {

struct CpuQuota {
  double quota_s = 0;   // CPU time per period; 0: not limited
  double period_s = 0;  // length of a period
  bool limited() const { return quota_s > 0 && period_s > 0; }
  double fraction() const { return limited() ? quota_s / period_s : 1.0; }
};

// What `shoal cluster up` applies for a device's `cpu` (host cores): period
// 20 ms, longer when the quota would fall under the kernel's 1 ms minimum.
CpuQuota QuotaForCpu(double cpu);
int64_t QuotaPeriodUs(double cpu);
int64_t QuotaUs(double cpu);

// One single-threaded CPU under a quota; periods start at phase_s + k *
// period_s. Run() returns when `cpu_s` seconds of CPU time started at
// `start_s` are done, and charges them to the periods they ran in. Calls
// come in non-decreasing start order (one task at a time).
class QuotaClock {
 public:
  QuotaClock() = default;
  QuotaClock(CpuQuota q, double phase_s) : q_(q), phase_(phase_s) {}
  double Run(double start_s, double cpu_s);

 private:
  CpuQuota q_;
  double phase_ = 0;
  int64_t period_ = INT64_MIN;  // index of the period `used_` belongs to
  double used_ = 0;
};

}  // namespace shoal

#endif  // SHOAL_CLUSTER_CPU_QUOTA_H_
