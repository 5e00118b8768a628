// A device's power draw and the energy one inference costs it: the power it
// draws while powered (idle), more while it computes (busy), and joules per
// byte it sends and receives. `shoal simulate` and `shoal bench` report the
// energy per inference of each device and of all of them, the LCP paper's
// Fig. 13 form (docs/energy.md).
#ifndef SHOAL_CLUSTER_POWER_H_
#define SHOAL_CLUSTER_POWER_H_

#include <cstdint>
#include <string>

#include "util/status.h"

namespace shoal {

struct PowerSpec {
  double idle_w = 0;  // powered, nothing to do
  double busy_w = 0;  // every core computing
  double send_j_per_byte = 0;
  double receive_j_per_byte = 0;
  // From the cluster file's `power` block; false: the Raspberry Pi 3
  // defaults below, or a board class's (cluster/board.h).
  bool given = false;
  // Whose figures they are when not given: "" for the Raspberry Pi 3's.
  std::string source;
};

// A Raspberry Pi 3 Model B at 5.00 V, measured by F. Guerraz (2017,
// https://medium.com/@fguerraz/raspberry-pi-3-model-b-power-consumption-925eeb43cd77):
// 1.22 W idle after boot (HDMI, USB and Ethernet on), 3.95 W with four cores
// under sysbench. No published per-byte figure for the Pi 3's Wi-Fi was
// found, so the link terms are 0 unless a cluster file gives them; the
// radio's idle draw is part of the idle figure, and a device waiting for
// its data pays idle power for that time.
PowerSpec Pi3Power();

// One device's energy per inference, in joules, from what it did over a
// run of `inferences` requests that took `wall_s` from first to last:
// idle power over the wall time, the extra of busy power over its busy
// (computing) time, and its bytes at the per-byte costs.
struct DeviceEnergy {
  double idle_j = 0, compute_j = 0, network_j = 0;
  double total() const { return idle_j + compute_j + network_j; }
};
DeviceEnergy EnergyPerInference(const PowerSpec& p, double wall_s,
                                double busy_s, int64_t bytes_sent,
                                int64_t bytes_received, int64_t inferences);

// "3.95W", "950mW", "3.95" (watts) -> watts.
StatusOr<double> ParsePower(const std::string& text);
// "120nJ/B", "0.12uJ/B", "1.2e-7" (joules per byte) -> joules per byte.
StatusOr<double> ParseEnergyPerByte(const std::string& text);
std::string FormatPower(double watts);
std::string FormatEnergyPerByte(double j_per_byte);

// Bounds a cluster file's figures must be within; the error names the
// field.
Status CheckPower(const PowerSpec& p);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_POWER_H_
