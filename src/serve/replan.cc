#include "serve/replan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "plan/plan_json.h"
#include "serve/monitor.h"
#include "util/units.h"

namespace shoal {

double MaxOf(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

bool SamePlanShape(const Plan& a, const Plan& b) {
  auto shape = [](Plan p) {
    for (auto& d : p.devices) d.share = 1;
    p.decisions.clear();
    return PlanToJson(p).dump();
  };
  return shape(a) == shape(b);
}

StatusOr<ReplanVerdict> JudgeAgainstCurrent(
    const Plan& current, const std::vector<DeviceSpec>& current_devices,
    const Plan& next, const std::vector<double>& next_ms,
    const std::vector<DeviceSpec>& devices, bool force, double min_gain) {
  ReplanVerdict v;
  std::vector<DeviceSpec> at_new_speeds = current_devices;
  bool same_set = at_new_speeds.size() == devices.size();
  for (auto& c : at_new_speeds) {
    bool found = false;
    for (const auto& d : devices) {
      if (d.name == c.name && d.address == c.address) {
        c.speed = d.speed;
        found = true;
      }
    }
    same_set &= found;
  }
  if (!same_set) return v;
  v.current_devices = std::move(at_new_speeds);
  ASSIGN_OR_RETURN(v.current_ms, PredictComputeMs(current, v.current_devices));
  const bool same = SamePlanShape(next, current);
  if (same) {
    v.keep_current = true;
    v.why = "the planner gives the same plan";
  } else if (!force && MaxOf(next_ms) > (1 - min_gain) * MaxOf(v.current_ms)) {
    v.keep_current = true;
    v.why = "it would not gain enough";
  }
  return v;
}

std::string SharesLine(const std::vector<DeviceSpec>& before,
                       const std::vector<DeviceSpec>& after) {
  std::string out;
  for (const auto& d : after) {
    double old = 0;
    for (const auto& b : before) {
      if (b.name == d.name) old = b.speed;
    }
    char buf[128];
    if (before.empty()) {
      std::snprintf(buf, sizeof(buf), "%s%s %.2f", out.empty() ? "" : ", ",
                    d.name.c_str(), d.speed);
    } else {
      std::snprintf(buf, sizeof(buf), "%s%s %.2f -> %.2f",
                    out.empty() ? "" : ", ", d.name.c_str(), old, d.speed);
    }
    out += buf;
  }
  for (const auto& b : before) {
    bool kept = false;
    for (const auto& d : after) kept |= d.name == b.name;
    if (kept) continue;
    char buf[128];
    std::snprintf(buf, sizeof(buf), ", %s %.2f -> gone", b.name.c_str(),
                  b.speed);
    out += buf;
  }
  return out;
}

rpc::Replan ReplanRecord(int64_t generation, const std::string& kind,
                         const std::string& reason, const std::string& strategy,
                         const std::vector<DeviceSpec>& old_devices,
                         const std::vector<DeviceSpec>& devices,
                         const std::vector<double>& predicted_ms,
                         double measured_ms) {
  rpc::Replan r;
  r.set_generation(generation);
  r.set_reason(reason);
  r.set_kind(kind);
  r.set_strategy(strategy);
  for (const auto& d : devices) {
    r.add_devices(d.name);
    double was = 0;
    for (const auto& o : old_devices) {
      if (o.name == d.name) was = o.speed;
    }
    r.add_old_shares(was);
    r.add_new_shares(d.speed);
  }
  r.set_predicted_ms(MaxOf(predicted_ms));
  r.set_measured_ms(measured_ms);
  r.set_unix_ms(std::chrono::duration_cast<std::chrono::milliseconds>(
                    std::chrono::system_clock::now().time_since_epoch())
                    .count());
  return r;
}

std::string SwitchReportText(const SwitchReport& r) {
  std::string pred_line;
  for (size_t d = 0; d < r.devices.size(); ++d) {
    char buf[160];
    double was = 0;
    for (size_t o = 0; o < r.old_devices.size(); ++o) {
      if (r.old_devices[o].name == r.devices[d].name &&
          o < r.measured_before_ms.size()) {
        was = r.measured_before_ms[o];
      }
    }
    std::snprintf(buf, sizeof(buf), "%s%s %.2f ms",
                  pred_line.empty() ? "" : ", ", r.devices[d].name.c_str(),
                  d < r.predicted_ms.size() ? r.predicted_ms[d] : 0.0);
    pred_line += buf;
    if (was > 0) {
      std::snprintf(buf, sizeof(buf), " (measured on the old plan: %.2f ms)",
                    was);
      pred_line += buf;
    }
  }
  std::string done;
  if (!r.first) {
    char buf[200];
    std::snprintf(buf, sizeof(buf),
                  "; %s %d %s of generation %lld; switch took %.0f ms",
                  r.cancelled ? "cancelled (to retry once)" : "drained",
                  r.old_requests, r.old_requests == 1 ? "request" : "requests",
                  static_cast<long long>(r.old_generation), r.switch_ms);
    done = buf;
  }
  char deployed[160];
  std::snprintf(deployed, sizeof(deployed),
                "  deployed in %.0f ms (%s of weights uploaded)", r.deploy_ms,
                HumanBytes(r.uploaded_bytes).c_str());
  return std::string(r.first ? "plan:" : "re-plan ->") + " generation " +
         std::to_string(r.generation) + " (" + r.strategy + " on " +
         Plural(static_cast<int64_t>(r.devices.size()), "device") +
         (r.note.empty() ? "" : "; " + r.note) + ") because " + r.reason +
         "\n  shares: " + SharesLine(r.old_devices, r.devices) +
         "\n  predicted compute per request: " + pred_line + "\n" + deployed +
         (r.drained_first ? " after draining first" : "") + done;
}

}  // namespace shoal
