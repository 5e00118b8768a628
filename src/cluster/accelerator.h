// A device's tailored accelerator: the LCP paper's systolic array (its
// Fig. 8: 32 x 64 cells, adder trees down each column, a buffer for the
// stationary operand in every cell, the first row alone wired to memory,
// LPDDR2 behind it). The cluster file declares one on a device
// (`accelerator: {kind: systolic, rows: 32, cols: 64, clock: 53MHz, ...}`)
// and `shoal analyze --accelerator` takes the same keys inline; its cost
// model is sim/systolic.h (docs/accelerator.md).
#ifndef SHOAL_CLUSTER_ACCELERATOR_H_
#define SHOAL_CLUSTER_ACCELERATOR_H_

#include <cstdint>
#include <string>

#include "util/status.h"

namespace shoal {

struct AcceleratorSpec {
  bool present = false;  // kind: systolic
  int rows = 32;         // cells down a column: the reduction's block
  int cols = 64;         // columns: output channels computed at once
  // The paper's 217.6 GOPs/s peak is 32 x 64 cells at 2 operations per
  // MAC and 53.1 MHz; its 7 nm ASIC runs at 800 MHz.
  double clock_hz = 53.125e6;
  int64_t sram_bytes = int64_t{512} << 10;  // on-chip activation buffer
  double dram_bytes_per_s = 3.2e9;          // LPDDR2-800, 32 bits wide
  int bits = 8;                             // operand width
  // Energy (45 nm figures of M. Horowitz, "Computing's energy problem",
  // ISSCC 2014: an 8-bit multiply 0.2 pJ and add 0.03 pJ; a 32 KB SRAM
  // read of 64 bits 20 pJ; DRAM 1.3-2.6 nJ per 64 bits, the low end), and
  // the paper's chip drawing 16 mW.
  double mac_j = 0.23e-12;
  double sram_j_per_byte = 2.5e-12;
  double dram_j_per_byte = 160e-12;
  double static_w = 16e-3;
  double bytes_per_operand() const { return bits / 8.0; }
  double peak_macs_per_s() const { return double(rows) * cols * clock_hz; }
  bool operator==(const AcceleratorSpec&) const = default;
};

// Parses `key: value` pairs as the cluster file's block or the inline
// form `rows=32,cols=64,clock=53MHz` gives them (`kind` only in the
// block). Keys: rows, cols, clock (Hz, kHz, MHz, GHz), sram (a size),
// dram (bytes per second: 3.2GB/s), bits (8, 16 or 32), mac, sram_energy,
// dram_energy (pJ, pJ/B), static (W, mW).
Status SetAcceleratorKey(const std::string& key, const std::string& value,
                         AcceleratorSpec* spec);
// The inline form; `where` names it in errors.
StatusOr<AcceleratorSpec> ParseAcceleratorInline(const std::string& text);
// Checks the whole spec after its keys are set.
Status CheckAccelerator(const AcceleratorSpec& spec);
// One line: "systolic 32x64 at 53.1 MHz, 512 KiB SRAM, 3.2 GB/s DRAM, 8-bit".
std::string DescribeAccelerator(const AcceleratorSpec& spec);

}  // namespace shoal

#endif  // SHOAL_CLUSTER_ACCELERATOR_H_
