// The profiling database's regressions: per device and op class, seconds =
// intercept + per_mac * MACs + per_byte * bytes with every coefficient >= 0,
// fitted to relative error (a 50 us layer counts as much as a 500 ms one),
// plus the overall "*" fit for op types never measured.
#ifndef SHOAL_SIM_FIT_H_
#define SHOAL_SIM_FIT_H_

#include <vector>

#include "sim/profile.h"

namespace shoal {

// Non-negative least squares of seconds on (1, macs, bytes), each sample
// weighted by 1 / seconds. Exact over the 7 subsets of active coefficients
// (the best feasible unconstrained solution of some subset is the NNLS
// optimum). No samples: a zero fit. Under a CPU quota `q` the seconds
// fitted are the samples' paced ones (PacedSeconds), as the simulator
// counts them.
OpFit FitSamples(const std::vector<const LayerSample*>& samples,
                 const CpuQuota& q = {});

// Refits every op class of `d` from its samples, and "*" over all of them.
void RefitDevice(DeviceProfile* d);

// Adds `from` to `into`: a sample of the same (model, layer, variant, op,
// macs, bytes) is replaced by the newer one, the others accumulate; a
// device's link and CPU quota are the newer ones; every touched device is
// refit. Devices only in `from` are appended.
void MergeProfile(const Profile& from, Profile* into);

}  // namespace shoal

#endif  // SHOAL_SIM_FIT_H_
