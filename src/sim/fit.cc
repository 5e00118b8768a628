#include "sim/fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

namespace shoal {

namespace {

constexpr int kVars = 3;  // intercept, macs, bytes

// Solves the normal equations of the columns in `mask` by Gaussian
// elimination; false when they are singular.
bool SolveSubset(const double ata[kVars][kVars], const double atb[kVars],
                 int mask, double x[kVars]) {
  int idx[kVars], n = 0;
  for (int i = 0; i < kVars; ++i) {
    if (mask & (1 << i)) idx[n++] = i;
  }
  double a[kVars][kVars + 1];
  for (int r = 0; r < n; ++r) {
    for (int c = 0; c < n; ++c) a[r][c] = ata[idx[r]][idx[c]];
    a[r][n] = atb[idx[r]];
  }
  for (int c = 0; c < n; ++c) {
    int piv = c;
    for (int r = c + 1; r < n; ++r) {
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    }
    if (std::fabs(a[piv][c]) < 1e-12 * std::max(1.0, std::fabs(ata[0][0]))) {
      return false;
    }
    std::swap(a[c], a[piv]);
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k <= n; ++k) a[r][k] -= f * a[c][k];
    }
  }
  for (int i = 0; i < kVars; ++i) x[i] = 0;
  for (int r = 0; r < n; ++r) x[idx[r]] = a[r][n] / a[r][r];
  return true;
}

}  // namespace

OpFit FitSamples(const std::vector<const LayerSample*>& samples,
                 const CpuQuota& q) {
  OpFit best;
  best.samples = static_cast<int>(samples.size());
  if (samples.empty()) return best;
  // Columns scaled to at most 1 so that the normal equations stay well
  // conditioned whatever the units.
  double scale[kVars] = {1, 0, 0};
  for (const auto* s : samples) {
    scale[1] = std::max(scale[1], double(s->macs));
    scale[2] = std::max(scale[2], double(s->bytes));
  }
  for (double& v : scale) v = v > 0 ? v : 1;
  double ata[kVars][kVars] = {}, atb[kVars] = {};
  std::vector<std::array<double, kVars + 1>> rows;
  for (const auto* s : samples) {
    const double y = PacedSeconds(*s, q);
    const double w = y > 0 ? 1.0 / y : 1.0;
    std::array<double, kVars + 1> r = {w / scale[0], w * s->macs / scale[1],
                                       w * s->bytes / scale[2], w * y};
    rows.push_back(r);
    for (int i = 0; i < kVars; ++i) {
      for (int k = 0; k < kVars; ++k) ata[i][k] += r[i] * r[k];
      atb[i] += r[i] * r[kVars];
    }
  }
  double best_err = INFINITY;
  int best_n = kVars + 1;
  for (int mask = 1; mask < (1 << kVars); ++mask) {
    double x[kVars];
    if (!SolveSubset(ata, atb, mask, x)) continue;
    bool feasible = true;
    for (double v : x) feasible &= v >= 0;
    if (!feasible) continue;
    double err = 0;
    for (const auto& r : rows) {
      double e = -r[kVars];
      for (int i = 0; i < kVars; ++i) e += r[i] * x[i];
      err += e * e;
    }
    const int n = __builtin_popcount(mask);
    // Ties (exact data): the fewer coefficients.
    if (err < best_err * (1 - 1e-9) ||
        (err <= best_err * (1 + 1e-9) && n < best_n)) {
      best_err = err;
      best_n = n;
      best.intercept_s = x[0] / scale[0];
      best.per_mac_s = x[1] / scale[1];
      best.per_byte_s = x[2] / scale[2];
    }
  }
  return best;
}

void RefitDevice(DeviceProfile* d) {
  std::map<std::string, std::vector<const LayerSample*>> by_op;
  std::vector<const LayerSample*> all;
  for (const auto& s : d->samples) {
    by_op[s.op].push_back(&s);
    all.push_back(&s);
  }
  d->fits.clear();
  const CpuQuota q = ComputeQuota(*d);
  for (const auto& [op, v] : by_op) d->fits[op] = FitSamples(v, q);
  d->fits["*"] = FitSamples(all, q);
}

void MergeProfile(const Profile& from, Profile* into) {
  auto key = [](const LayerSample& s) {
    return std::make_tuple(s.model, s.layer, s.variant, s.op, s.macs, s.bytes);
  };
  for (const auto& fd : from.devices) {
    DeviceProfile* d = nullptr;
    for (auto& x : into->devices) {
      if (x.name == fd.name) d = &x;
    }
    if (d == nullptr) {
      into->devices.push_back(fd);
      RefitDevice(&into->devices.back());
      continue;
    }
    std::map<decltype(key(fd.samples[0])), size_t> at;
    for (size_t i = 0; i < d->samples.size(); ++i) at[key(d->samples[i])] = i;
    for (const auto& s : fd.samples) {
      auto it = at.find(key(s));
      if (it != at.end()) {
        d->samples[it->second] = s;
      } else {
        at[key(s)] = d->samples.size();
        d->samples.push_back(s);
      }
    }
    d->link = fd.link;
    d->send_cpu_s = fd.send_cpu_s;
    d->recv_cpu_s = fd.recv_cpu_s;
    d->send_cpu_per_byte_s = fd.send_cpu_per_byte_s;
    d->recv_cpu_per_byte_s = fd.recv_cpu_per_byte_s;
    d->idle_cpu_per_s = fd.idle_cpu_per_s;
    if (fd.has_cpu_quota) {
      d->has_cpu_quota = true;
      d->cpu_quota = fd.cpu_quota;
    }
    d->cpu_pace = fd.cpu_pace;
    RefitDevice(d);
  }
}

}  // namespace shoal
