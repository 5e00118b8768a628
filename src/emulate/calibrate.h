// How fast this host computes, so that an emulated device runs at its
// declared speed on any machine (`shoal cluster up`): a device of `speed`
// s does s x kPi3MacsPerSecond (a Raspberry Pi 3, sim/latency_model.h), and
// the worker paces each task to host CPU time / fraction, so its fraction
// of a host core is s x kPi3MacsPerSecond / the host's rate.
#ifndef SHOAL_EMULATE_CALIBRATE_H_
#define SHOAL_EMULATE_CALIBRATE_H_

#include "util/status.h"

namespace shoal {

struct HostRate {
  double macs_per_cpu_second = 0;  // conv and gemm together, one core
  double conv_macs_per_cpu_second = 0;
  double gemm_macs_per_cpu_second = 0;
  int runs = 0;
  bool cached = false;  // read from HostRateFile()
};

// Times a reference graph (two 3x3 convolutions of VGG16's second stage,
// 64 channels at 56x56, and a 4096 -> 1024 fully connected layer) on the
// engine with one kernel thread, by CPU time, the quickest of 15 runs after
// a warm-up. About half a second.
StatusOr<HostRate> CalibrateHost();

// The host's calibration, measured once and kept in HostRateFile() for
// every later cluster on this host (until a reboot clears /tmp, or the
// CPU differs): two clusters compared in one benchmark must run their
// devices at the same fraction, and a calibration taken while the other
// hyperthread of the core is busy reads slower.
StatusOr<HostRate> CachedHostRate(bool remeasure);
std::string HostRateFile();

// The fraction of a host core that emulates a device of `speed`.
double CpuFractionForSpeed(double speed, const HostRate& host);

}  // namespace shoal

#endif  // SHOAL_EMULATE_CALIBRATE_H_
