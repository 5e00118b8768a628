#include "cluster/power.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace shoal {

namespace {

// Above any board shoal is for, and far above a Pi's 3.95 W; a bound keeps
// a typo (3950 for 3.95) from passing as a figure.
constexpr double kMaxWatts = 1e4;
// 1 mJ per byte is a thousand times a 2001 Wi-Fi card's (Feeney and
// Nilsson measured 1.9 uJ/B sending).
constexpr double kMaxJoulesPerByte = 1e-3;

// "3.95W" -> 3.95 and "W"; false unless a finite, non-negative number
// starts the text.
bool SplitValue(const std::string& text, double* v, std::string* unit) {
  if (text.empty()) return false;
  char* end = nullptr;
  *v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || !std::isfinite(*v) || *v < 0) return false;
  *unit = std::string(end);
  while (!unit->empty() && unit->front() == ' ') unit->erase(0, 1);
  return true;
}

StatusOr<double> WithUnits(
    const std::string& text,
    std::initializer_list<std::pair<const char*, double>> units,
    const std::string& what) {
  double v;
  std::string u;
  if (SplitValue(text, &v, &u)) {
    for (const auto& [name, mult] : units) {
      if (u == name) return v * mult;
    }
  }
  return InvalidArgument("'" + text + "' is not " + what);
}

std::string Trimmed(double v, const char* unit) {
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.6g%s", v, unit);
  return buf;
}

}  // namespace

PowerSpec Pi3Power() {
  PowerSpec p;
  p.idle_w = 1.22;
  p.busy_w = 3.95;
  return p;
}

DeviceEnergy EnergyPerInference(const PowerSpec& p, double wall_s,
                                double busy_s, int64_t bytes_sent,
                                int64_t bytes_received, int64_t inferences) {
  DeviceEnergy e;
  if (inferences <= 0) return e;
  const double n = static_cast<double>(inferences);
  // Busy time beyond the wall time is the device's cores counted in
  // parallel by its worker; power saturates at busy_w.
  const double busy = std::min(std::max(busy_s, 0.0), std::max(wall_s, 0.0));
  e.idle_j = p.idle_w * std::max(wall_s, 0.0) / n;
  e.compute_j = std::max(p.busy_w - p.idle_w, 0.0) * busy / n;
  e.network_j = (p.send_j_per_byte * static_cast<double>(bytes_sent) +
                 p.receive_j_per_byte * static_cast<double>(bytes_received)) /
                n;
  return e;
}

StatusOr<double> ParsePower(const std::string& text) {
  return WithUnits(text, {{"", 1}, {"W", 1}, {"mW", 1e-3}},
                   "a power (e.g. 3.95W, 950mW)");
}

StatusOr<double> ParseEnergyPerByte(const std::string& text) {
  return WithUnits(text,
                   {{"", 1},
                    {"J/B", 1},
                    {"mJ/B", 1e-3},
                    {"uJ/B", 1e-6},
                    {"nJ/B", 1e-9},
                    {"pJ/B", 1e-12}},
                   "an energy per byte (e.g. 120nJ/B, 0.12uJ/B)");
}

std::string FormatPower(double watts) { return Trimmed(watts, "W"); }

std::string FormatEnergyPerByte(double j_per_byte) {
  return Trimmed(j_per_byte * 1e9, "nJ/B");
}

Status CheckPower(const PowerSpec& p) {
  auto watts_ok = [](double w) { return w >= 0 && w <= kMaxWatts; };
  if (!watts_ok(p.idle_w) || !watts_ok(p.busy_w)) {
    return InvalidArgument("power idle and busy must be within 0 and 10kW");
  }
  if (p.busy_w < p.idle_w) {
    return InvalidArgument("power busy (" + FormatPower(p.busy_w) +
                           ") is below idle (" + FormatPower(p.idle_w) + ")");
  }
  auto per_byte_ok = [](double j) { return j >= 0 && j <= kMaxJoulesPerByte; };
  if (!per_byte_ok(p.send_j_per_byte) || !per_byte_ok(p.receive_j_per_byte)) {
    return InvalidArgument("power send and receive must be within 0 and 1mJ/B");
  }
  return Status::Ok();
}

}  // namespace shoal
