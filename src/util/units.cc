#include "util/units.h"

#include <cmath>
#include <cstdio>

namespace shoal {

std::string MiB(int64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

std::string HumanBytes(int64_t bytes) {
  char buf[32];
  if (bytes >= (int64_t{1} << 30)) {
    std::snprintf(buf, sizeof(buf), "%.2f GiB", bytes / 1073741824.0);
  } else if (bytes >= (int64_t{1} << 20)) {
    std::snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  } else if (bytes >= 1024) {
    std::snprintf(buf, sizeof(buf), "%.1f KiB", bytes / 1024.0);
  } else {
    std::snprintf(buf, sizeof(buf), "%lld B", static_cast<long long>(bytes));
  }
  return buf;
}

std::string HumanCount(int64_t n) {
  char buf[32];
  const double v = std::fabs(static_cast<double>(n));  // -INT64_MIN wraps
  const char* sign = n < 0 ? "-" : "";
  // Three significant digits: 1.81, 23.3 or 714 of the unit.
  auto three = [&](double x, const char* unit) {
    const int decimals = x < 9.995 ? 2 : x < 99.95 ? 1 : 0;
    std::snprintf(buf, sizeof(buf), "%s%.*f %s", sign, decimals, x, unit);
  };
  if (v >= 999.5e6) {
    three(v / 1e9, "G");
  } else if (v >= 999.5e3) {
    three(v / 1e6, "M");
  } else if (v >= 1e3) {
    three(v / 1e3, "k");
  } else {
    std::snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(n));
  }
  return buf;
}

std::string HumanBitRate(double bps) {
  char buf[32];
  if (bps >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.4g Gbit/s", bps / 1e9);
  } else if (bps >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.4g Mbit/s", bps / 1e6);
  } else if (bps >= 1e3) {
    std::snprintf(buf, sizeof(buf), "%.4g kbit/s", bps / 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.4g bit/s", bps);
  }
  return buf;
}

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", 100 * fraction);
  return buf;
}

std::string Plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string HumanMs(double ms) {
  char buf[48];
  if (!(ms == ms)) return "-";  // NaN: nothing measured
  if (ms < 0.1) {
    std::snprintf(buf, sizeof(buf), "%.1f us", ms * 1e3);
  } else if (ms < 10) {
    std::snprintf(buf, sizeof(buf), "%.2f ms", ms);
  } else if (ms < 999.95) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", ms);
  } else if (ms < 59995) {
    std::snprintf(buf, sizeof(buf), "%.2f s", ms / 1e3);
  } else {
    const long long s = std::llround(ms / 1e3);
    std::snprintf(buf, sizeof(buf), "%lld min %02lld s", s / 60, s % 60);
  }
  return buf;
}

}  // namespace shoal
