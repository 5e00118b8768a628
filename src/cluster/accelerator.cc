#include "cluster/accelerator.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <utility>
#include <vector>

#include "cluster/cluster.h"
#include "util/units.h"

namespace shoal {

namespace {

// "53MHz" -> 53e6 with the units given; false when the number or the unit
// is not one of them.
bool Scaled(const std::string& text,
            const std::vector<std::pair<std::string, double>>& units,
            double* out) {
  const char* begin = text.c_str();
  char* end = nullptr;
  const double v = std::strtod(begin, &end);
  if (end == begin || !std::isfinite(v)) return false;
  const std::string unit(end);
  for (const auto& [name, mult] : units) {
    if (unit == name) {
      *out = v * mult;
      return std::isfinite(*out);
    }
  }
  return false;
}

Status Bad(const std::string& key, const std::string& value,
           const std::string& want) {
  return InvalidArgument("accelerator " + key + " '" + value + "' is not " +
                         want);
}

}  // namespace

Status SetAcceleratorKey(const std::string& key, const std::string& value,
                         AcceleratorSpec* spec) {
  double v = 0;
  if (key == "rows" || key == "cols" || key == "bits") {
    if (!Scaled(value, {{"", 1}}, &v) || v != std::floor(v) || v < 1 ||
        v > 4096) {
      return Bad(key, value, "a whole number from 1 to 4096");
    }
    (key == "rows"   ? spec->rows
     : key == "cols" ? spec->cols
                     : spec->bits) = static_cast<int>(v);
  } else if (key == "clock") {
    if (!Scaled(value, {{"Hz", 1}, {"kHz", 1e3}, {"MHz", 1e6}, {"GHz", 1e9}},
                &v)) {
      return Bad(key, value, "a frequency (53MHz, 0.8GHz)");
    }
    spec->clock_hz = v;
  } else if (key == "sram") {
    auto b = ParseBytes(value);
    if (!b.ok()) return b.status().WithContext("accelerator sram");
    spec->sram_bytes = b.value();
  } else if (key == "dram") {
    if (!Scaled(value,
                {{"B/s", 1}, {"KB/s", 1e3}, {"MB/s", 1e6}, {"GB/s", 1e9}},
                &v)) {
      return Bad(key, value, "a rate in bytes per second (3.2GB/s)");
    }
    spec->dram_bytes_per_s = v;
  } else if (key == "mac") {
    if (!Scaled(value, {{"pJ", 1e-12}, {"nJ", 1e-9}}, &v)) {
      return Bad(key, value, "an energy per MAC (0.23pJ)");
    }
    spec->mac_j = v;
  } else if (key == "sram_energy" || key == "dram_energy") {
    if (!Scaled(value, {{"pJ/B", 1e-12}, {"nJ/B", 1e-9}}, &v)) {
      return Bad(key, value, "an energy per byte (2.5pJ/B)");
    }
    (key == "sram_energy" ? spec->sram_j_per_byte : spec->dram_j_per_byte) = v;
  } else if (key == "static") {
    if (!Scaled(value, {{"W", 1}, {"mW", 1e-3}}, &v)) {
      return Bad(key, value, "a power (16mW)");
    }
    spec->static_w = v;
  } else {
    return InvalidArgument(
        "accelerator has an unknown key '" + key +
        "' (rows, cols, clock, sram, dram, bits, mac, sram_energy, "
        "dram_energy, static)");
  }
  return Status::Ok();
}

Status CheckAccelerator(const AcceleratorSpec& s) {
  if (s.bits != 8 && s.bits != 16 && s.bits != 32) {
    return InvalidArgument("accelerator bits must be 8, 16 or 32");
  }
  if (!(s.clock_hz >= 1e3 && s.clock_hz <= 1e11)) {
    return InvalidArgument("accelerator clock must be within 1kHz and 100GHz");
  }
  if (!(s.dram_bytes_per_s >= 1e3 && s.dram_bytes_per_s <= 1e13)) {
    return InvalidArgument("accelerator dram must be within 1KB/s and 10TB/s");
  }
  if (s.sram_bytes < 1024) {
    return InvalidArgument("accelerator sram must be at least 1KiB");
  }
  for (double e : {s.mac_j, s.sram_j_per_byte, s.dram_j_per_byte, s.static_w}) {
    if (!(e >= 0 && e < 1)) {
      return InvalidArgument(
          "accelerator energies and power must be non-negative and below 1 "
          "J (or W)");
    }
  }
  return Status::Ok();
}

StatusOr<AcceleratorSpec> ParseAcceleratorInline(const std::string& text) {
  AcceleratorSpec spec;
  spec.present = true;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos) {
      return InvalidArgument(
          "accelerator '" + text + "': '" + item +
          "' is not KEY=VALUE (rows=32,cols=64,clock=53MHz)");
    }
    RETURN_IF_ERROR(
        SetAcceleratorKey(item.substr(0, eq), item.substr(eq + 1), &spec));
  }
  RETURN_IF_ERROR(CheckAccelerator(spec));
  return spec;
}

std::string DescribeAccelerator(const AcceleratorSpec& s) {
  char line[200];
  std::snprintf(line, sizeof(line),
                "systolic %dx%d at %.1f MHz (%.1f GMAC/s peak), %s SRAM, "
                "%.1f GB/s DRAM, %d-bit",
                s.rows, s.cols, s.clock_hz / 1e6, s.peak_macs_per_s() / 1e9,
                HumanBytes(s.sram_bytes).c_str(), s.dram_bytes_per_s / 1e9,
                s.bits);
  return line;
}

}  // namespace shoal
