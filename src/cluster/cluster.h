// The cluster file: the devices a plan runs on, their resources and links.
// Documented in docs/cluster-format.md.
#ifndef SHOAL_CLUSTER_CLUSTER_H_
#define SHOAL_CLUSTER_CLUSTER_H_

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "cluster/accelerator.h"
#include "cluster/board.h"
#include "cluster/power.h"
#include "plan/plan.h"
#include "security/tls_paths.h"
#include "util/status.h"

namespace shoal {

struct Link {
  double bandwidth_bps = 0;  // bits per second; 0: unlimited
  double latency_s = 0;
};

// The radio the devices share (`network: {medium: shared, bandwidth: ...}`):
// one Wi-Fi channel carries every device's traffic, one frame at a time, so
// what devices send adds up on it; a message from one device to another
// goes up to the access point and down again, and takes its airtime twice.
// Each device's own `link` still applies (docs/cluster-format.md).
struct Medium {
  bool shared = false;
  double bandwidth_bps = 0;  // the channel's rate, with `shared`
  // Seconds of the channel a message of `bytes` between two stations
  // occupies (twice its time at the channel's rate); 0 without `shared`.
  double Airtime(int64_t bytes) const {
    return shared ? 2.0 * bytes * 8.0 / bandwidth_bps : 0.0;
  }
};

struct DeviceSpec {
  DeviceSpec() = default;
  // A device with every default but where its worker listens.
  DeviceSpec(std::string name, std::string address)
      : name(std::move(name)), address(std::move(address)) {}

  std::string name;
  std::string address;       // host:port of its worker
  int64_t memory_bytes = 0;  // 0: unlimited
  int cores = 1;
  // Relative compute speed, 1 = the LCP paper's Pi 3: what split sizes
  // follow. On a named board, the class's RelativeSpeed times board_speed.
  double speed = 1.0;
  // `board: NAME` (cluster/board.h): the class the device is, nullptr when
  // none is named; `speed` in the file is then a multiplier on the class,
  // kept here.
  const BoardClass* board = nullptr;
  double board_speed = 1.0;
  // A board priced by its class's rates (the roofline of cluster/board.h)
  // and emulated in its board time, as every class but the LCP paper's Pi
  // 3 is; that one is priced per MAC and emulated by a share of a core.
  bool OnBoardRates() const { return board != nullptr && !board->lcp_paper; }
  // `shoal cluster up`: CPU time of the emulated device, in host cores
  // (0.06: 6% of one core); 0: not limited.
  double cpu = 0;
  // `cluster up`: no `cpu` given but a `speed` (or `cpu: auto`): the
  // fraction comes from the host's calibration (emulate/calibrate.h), so
  // the device runs at its speed on any machine.
  bool cpu_from_speed = false;
  // `cluster up`: the cgroup CPU quota of the whole worker (gRPC, copies,
  // protocol), in host cores; 0: `cpu`. A slow board is further behind a
  // host on vectorised arithmetic than on moving bytes, so a calibrated
  // device gets more here than `cpu` (emulate/calibrate.h).
  double system_cpu = 0;
  // The quota `cluster up` applies: system_cpu, at least cpu.
  double QuotaCpu() const { return std::max(cpu, system_cpu); }
  Link link;
  // What it draws (`power` block; the Raspberry Pi 3 figures unless
  // given): energy per inference in simulate and bench.
  PowerSpec power = Pi3Power();
  // A tailored accelerator (`accelerator` block; cluster/accelerator.h):
  // the planner and simulator price its layers on it (sim/systolic.h).
  AcceleratorSpec accelerator;
  // `cluster up` with TLS: the certificate and key its worker shows (and
  // the cluster CA, from the cluster's block); empty: plaintext.
  TlsPaths tls;
};

struct Cluster {
  std::vector<DeviceSpec> devices;
  // The `tls` block (docs/security.md): what the coordinator (run, bench,
  // serve, profile) loads to reach the workers over mutual TLS; empty:
  // plaintext. Relative paths are resolved against the file's directory.
  TlsPaths tls;
  // `tls: {dir: ...}`: where `cluster up` keeps the CA and issues what is
  // missing; "" when the files are named one by one.
  std::string tls_dir;
  // `network:`: a shared medium, or (default) only the per-device links.
  Medium network;
  std::vector<PlanDevice> PlanDevices() const;
  // Each device's uplink in bits per second (0: unlimited or not given),
  // in device order: what fuse-ilp weighs the busiest link by.
  std::vector<double> UplinkRates() const;
  // The longest of the devices' link latencies, seconds.
  double MaxLinkLatency() const;
};

StatusOr<Cluster> LoadCluster(const std::string& path);
StatusOr<Cluster> ParseCluster(const std::string& yaml_text,
                               const std::string& origin);

// "1GiB", "512MB", "1048576" -> bytes; "62Mbit", "1Gbit" -> bits/s;
// "9ms", "0.4ms", "1s" -> seconds.
StatusOr<int64_t> ParseBytes(const std::string& text);
StatusOr<double> ParseBitRate(const std::string& text);
StatusOr<double> ParseDuration(const std::string& text);

// N equal devices named dev0..dev{N-1}, for --devices N.
Cluster EqualCluster(int n);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_CLUSTER_H_
