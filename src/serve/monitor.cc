#include "serve/monitor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "sim/latency_model.h"

namespace shoal {

StatusOr<std::vector<double>> PredictComputeMs(
    const Plan& plan, const std::vector<DeviceSpec>& devices) {
  if (devices.size() != plan.devices.size()) {
    return Internal("the plan has " + std::to_string(plan.devices.size()) +
                    " devices but " + std::to_string(devices.size()) +
                    " were given");
  }
  Cluster c;
  for (DeviceSpec d : devices) {
    d.cpu = 0;  // speed alone: the measurements absorb everything else
    d.system_cpu = 0;
    c.devices.push_back(d);
  }
  const LatencyModel model = LatencyModel::FromCluster(c);
  std::vector<double> ms(plan.devices.size(), 0.0);
  for (const auto& t : plan.tasks) {
    if (t.devices.empty() || t.fragment.nodes.empty()) continue;
    for (int d : t.Replicas()) {
      ASSIGN_OR_RETURN(double s, model.GraphSeconds(d, t.fragment));
      ms[d] += 1e3 * s * t.Share(d);
    }
  }
  return ms;
}

void LoadWindow::Add(const std::vector<DeviceStats>& stats) {
  window_.push_back(stats);
  while (static_cast<int>(window_.size()) > ticks_) window_.pop_front();
}

std::vector<DeviceLoad> LoadWindow::Loads(
    const Plan& plan, const std::vector<double>& predicted_ms) const {
  const size_t n = plan.devices.size();
  std::vector<DeviceLoad> out(n);
  for (size_t d = 0; d < n; ++d) {
    out[d].predicted_ms = d < predicted_ms.size() ? predicted_ms[d] : 0;
    double queued = 0, observed = 0;
    for (const auto& tick : window_) {
      if (d >= tick.size()) continue;
      const auto& h = tick[d].queue_histogram;
      for (size_t k = 0; k < h.size(); ++k) {
        queued += double(k) * h[k];
        observed += h[k];
      }
    }
    out[d].queue_mean = observed > 0 ? queued / observed : 0;
    double busy = 0, elapsed = 0;
    for (const auto& tick : window_) {
      if (d >= tick.size()) continue;
      busy += tick[d].busy_ms;
      elapsed += tick[d].elapsed_ms;
    }
    out[d].utilisation = elapsed > 0 ? std::min(1.0, busy / elapsed) : 0;
    double measured = 0;
    int64_t fewest = -1;
    for (const auto& t : plan.tasks) {
      if (t.fragment.nodes.empty()) continue;
      if (std::find(t.devices.begin(), t.devices.end(), int(d)) ==
          t.devices.end()) {
        continue;
      }
      std::vector<double> runs;
      for (const auto& tick : window_) {
        if (d >= tick.size() || t.id >= int(tick[d].task_compute_ms.size())) {
          continue;
        }
        for (float v : tick[d].task_compute_ms[t.id]) runs.push_back(v);
      }
      const int64_t count = static_cast<int64_t>(runs.size());
      fewest = fewest < 0 ? count : std::min(fewest, count);
      measured += Median(std::move(runs)) * t.Share(int(d));
    }
    out[d].samples = std::max<int64_t>(fewest, 0);
    out[d].measured_ms = out[d].samples > 0 ? measured : 0;
  }
  return out;
}

namespace {

bool Measured(const DeviceLoad& l, int64_t min_samples) {
  return l.samples >= min_samples && l.measured_ms > 0 && l.predicted_ms > 0;
}

// A device left with a sliver of the work (a pipeline stage of one small
// layer after earlier re-plans moved its share away) is timed mostly by
// fixed per-task overhead, so its measured/predicted ratio says nothing
// about its speed: judged on it, one re-plan after another would shrink its
// share towards zero. Such a device is neither judged nor re-measured.
constexpr double kSliverOfBusiest = 0.02;

std::vector<bool> Judged(const std::vector<DeviceLoad>& loads,
                         int64_t min_samples) {
  double busiest = 0;
  for (const auto& l : loads) busiest = std::max(busiest, l.predicted_ms);
  std::vector<bool> out(loads.size());
  for (size_t d = 0; d < loads.size(); ++d) {
    out[d] = Measured(loads[d], min_samples) &&
             loads[d].predicted_ms >= kSliverOfBusiest * busiest;
  }
  return out;
}

}  // namespace

Imbalance FindImbalance(const std::vector<DeviceLoad>& loads,
                        const std::vector<std::string>& names, double threshold,
                        int64_t min_samples) {
  Imbalance best;
  const std::vector<bool> judged = Judged(loads, min_samples);
  std::vector<int> measured;
  for (size_t d = 0; d < loads.size(); ++d) {
    if (judged[d]) measured.push_back(d);
  }
  if (measured.size() < 2) return best;
  double worst = std::log(threshold);
  for (int d : measured) {
    std::vector<double> others;
    for (int e : measured) {
      if (e != d)
        others.push_back(loads[e].measured_ms / loads[e].predicted_ms);
    }
    const double mine = loads[d].measured_ms / loads[d].predicted_ms;
    const double ratio = mine / Median(others);
    if (std::fabs(std::log(ratio)) <= worst) continue;
    worst = std::fabs(std::log(ratio));
    best.found = true;
    best.device = d;
    best.ratio = ratio;
    char buf[256];
    std::snprintf(buf, sizeof(buf),
                  "device %s is %s than planned: %.1f ms of compute per "
                  "request against %.1f ms predicted, %.2fx the others' "
                  "measured/predicted ratio (threshold %.2f)",
                  d < int(names.size()) ? names[d].c_str() : "?",
                  ratio > 1 ? "slower" : "faster", loads[d].measured_ms,
                  loads[d].predicted_ms, ratio, threshold);
    best.why = buf;
  }
  return best;
}

std::vector<double> MeasuredSpeeds(const std::vector<DeviceLoad>& loads,
                                   const std::vector<double>& assumed,
                                   int64_t min_samples) {
  const std::vector<bool> judged = Judged(loads, min_samples);
  std::vector<double> ratios;
  for (size_t d = 0; d < loads.size(); ++d) {
    if (judged[d])
      ratios.push_back(loads[d].measured_ms / loads[d].predicted_ms);
  }
  const double med = Median(ratios);
  std::vector<double> out = assumed;
  for (size_t d = 0; d < loads.size() && d < out.size(); ++d) {
    if (!judged[d] || med <= 0) continue;
    // Within the range a plan accepts for a share (plan/plan.h), or the
    // next deployment of these speeds would be refused by every worker.
    out[d] = std::clamp(
        assumed[d] * med / (loads[d].measured_ms / loads[d].predicted_ms),
        kMinShare, kMaxShare);
  }
  return out;
}

}  // namespace shoal
