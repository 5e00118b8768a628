// How fast this host computes, so that an emulated device runs at its
// declared speed on any machine (`shoal cluster up`): a device of `speed`
// s does s x kPi3MacsPerSecond (a Raspberry Pi 3, sim/latency_model.h), and
// the worker paces each task to host CPU time / fraction, so its fraction
// of a host core is s x kPi3MacsPerSecond / the host's rate.
//
// The rest of a worker's work (gRPC, copies, protocol) is not convolution:
// a Pi 3 is much further behind this host on vectorised arithmetic than on
// moving bytes, so that work runs under a CPU quota of its own, from the
// host's memory copy rate against a Pi 3's (SystemFractionForSpeed).
#ifndef SHOAL_EMULATE_CALIBRATE_H_
#define SHOAL_EMULATE_CALIBRATE_H_

#include "cluster/cluster.h"
#include "util/status.h"

namespace shoal {

struct HostRate {
  double macs_per_cpu_second = 0;  // conv and gemm together, one core
  double conv_macs_per_cpu_second = 0;
  double gemm_macs_per_cpu_second = 0;
  double copy_bytes_per_cpu_second = 0;  // memcpy of 64 MiB, one core
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

// A Raspberry Pi 3's single-core memory copy rate: a Cortex-A53 near 1.2
// GHz copies about 1 GB/s (lmbench `bw_mem 8M bcopy` on TI's AM62L, a
// Cortex-A53 at 1.25 GHz with faster LPDDR4, measures 1000 MB/s; the Pi 3's
// LPDDR2 is no faster).
constexpr double kPi3CopyBytesPerSecond = 1.0e9;

// The fraction of a host core that emulates a device of `speed`.
double CpuFractionForSpeed(double speed, const HostRate& host);

// The host cores the worker process of a device with `cores` cores gets for
// all its work (the cgroup quota): a Pi 3 core copies
// kPi3CopyBytesPerSecond, scaled by speed, over the host's copy rate, per
// core of the device; never less than the compute fraction, at most one
// host core per device core. Per core, because on a board the threads that
// send and receive run on the cores the computing thread leaves free: one
// core's worth would hold each message behind the task being computed.
double SystemFractionForSpeed(double speed, int cores, const HostRate& host);

// Host cores the named boards of `c` (cluster/board.h) would need to run in
// real time all at once. For each board, its compute: the larger of its
// fastest arithmetic over this host's one-core 3x3 conv rate and its memory
// rate over the rate this host streams an fc layer's weights at (4 bytes
// per MAC); plus its messages: its memory rate over this host's copy rate.
// A board serialises, copies and receives messages on the cores its
// computing thread leaves free, at once with its arithmetic, and its worker
// does that work (gRPC, copies) on this host at the host's copy rate.
// Counted by arithmetic alone, eight Pi 3B+ (0.70 cores of a 2-core host)
// ran in real time, AlexNet 10 % and LCP 30 % slower in board time than
// dilated x2, and four Pi 4B (1.11 cores) dilated x1.5, ResNet-50 4 %
// slower than x2 (docs/cluster-format.md).
double BoardHostCores(const Cluster& c, const HostRate& host);

// The time dilation that gives `need` host cores (BoardHostCores) half of
// `host_cores` (the other half runs gRPC, copies, the coordinator and the
// tasks' own overheads): at least 1, rounded up to a half.
double DilationFor(double need, int host_cores);

}  // namespace shoal

#endif  // SHOAL_EMULATE_CALIBRATE_H_
