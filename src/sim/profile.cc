#include "sim/profile.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "plan/json_parse.h"

namespace shoal {

double PacedSeconds(const LayerSample& s, const CpuQuota& q) {
  if (!q.limited() || q.fraction() >= 1 || s.cpu_seconds <= 0) return s.seconds;
  return s.cpu_seconds / q.fraction();
}

CpuQuota ComputeQuota(const DeviceProfile& d) {
  CpuQuota q = d.has_cpu_quota ? d.cpu_quota : CpuQuota{};
  if (d.cpu_pace > 0 && d.cpu_pace < q.fraction()) {
    if (q.period_s <= 0) q.period_s = 0.1;  // a pace alone, no cgroup
    q.quota_s = d.cpu_pace * q.period_s;
  }
  return q;
}

double PacedAloneSeconds(const LayerSample& s, const CpuQuota& q) {
  if (s.alone_seconds <= 0) return 0;
  if (!q.limited() || q.fraction() >= 1) return s.alone_seconds;
  if (s.alone_cpu_seconds > 0) return s.alone_cpu_seconds / q.fraction();
  // Older files kept no CPU alone: in the proportion of the wall times.
  return s.seconds > 0 ? PacedSeconds(s, q) * s.alone_seconds / s.seconds
                       : s.alone_seconds;
}

void ApplyInModelTimes(const std::map<std::string, double>& node_seconds,
                       double model_seconds, double model_cpu_seconds,
                       std::vector<LayerSample>* samples) {
  const double cpu_per_s =
      model_seconds > 0 ? model_cpu_seconds / model_seconds : 0;
  for (LayerSample& ls : *samples) {
    auto it = node_seconds.find(ls.layer);
    if (ls.variant != "whole" || it == node_seconds.end()) continue;
    ls.alone_seconds = ls.seconds;
    ls.alone_cpu_seconds = ls.cpu_seconds;
    ls.seconds = it->second;
    ls.cpu_seconds = it->second * cpu_per_s;
  }
}

const DeviceProfile* Profile::Find(const std::string& name) const {
  for (const auto& d : devices) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

Status SaveProfile(const Profile& p, const std::string& path) {
  nlohmann::json j;
  j["format"] = "shoal-profile";
  j["version"] = p.version;
  j["devices"] = nlohmann::json::array();
  for (const auto& d : p.devices) {
    nlohmann::json jd;
    jd["name"] = d.name;
    jd["link"] = {{"bandwidth_bps", d.link.bandwidth_bps},
                  {"latency_s", d.link.latency_s},
                  {"send_cpu_s", d.send_cpu_s},
                  {"recv_cpu_s", d.recv_cpu_s},
                  {"send_cpu_per_byte_s", d.send_cpu_per_byte_s},
                  {"recv_cpu_per_byte_s", d.recv_cpu_per_byte_s}};
    jd["idle_cpu_per_s"] = d.idle_cpu_per_s;
    if (d.has_cpu_quota) {
      jd["cpu_quota"] = {{"quota_s", d.cpu_quota.quota_s},
                         {"period_s", d.cpu_quota.period_s}};
    }
    if (d.cpu_pace > 0) jd["cpu_pace"] = d.cpu_pace;
    for (const auto& [op, f] : d.fits) {
      jd["fits"][op] = {{"intercept_s", f.intercept_s},
                        {"per_mac_s", f.per_mac_s},
                        {"per_byte_s", f.per_byte_s},
                        {"samples", f.samples}};
    }
    jd["samples"] = nlohmann::json::array();
    for (const auto& s : d.samples) {
      jd["samples"].push_back({{"model", s.model},
                               {"layer", s.layer},
                               {"variant", s.variant},
                               {"op", s.op},
                               {"macs", s.macs},
                               {"bytes", s.bytes},
                               {"seconds", s.seconds},
                               {"cpu_seconds", s.cpu_seconds},
                               {"alone_seconds", s.alone_seconds},
                               {"alone_cpu_seconds", s.alone_cpu_seconds}});
    }
    j["devices"].push_back(jd);
  }
  std::ofstream f(path);
  if (!f) return InvalidArgument("cannot write profile " + path);
  f << j.dump(1) << "\n";
  if (!f) return Internal("writing profile " + path + " failed");
  return Status::Ok();
}

StatusOr<Profile> LoadProfile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return NotFound("cannot open profile " + path);
  Profile p;
  try {
    ASSIGN_OR_RETURN(nlohmann::json j, ParseJson(f, "profile " + path));
    if (j.value("format", "") != "shoal-profile") {
      return InvalidArgument(path +
                             " is not a shoal profile (no \"format\": "
                             "\"shoal-profile\")");
    }
    p.version = j.at("version").get<int>();
    if (p.version != 1) {
      return InvalidArgument(path + ": profile version " +
                             std::to_string(p.version) +
                             " is not supported (this shoal reads 1)");
    }
    for (const auto& jd : j.at("devices")) {
      DeviceProfile d;
      d.name = jd.at("name").get<std::string>();
      d.link.bandwidth_bps = jd.at("link").at("bandwidth_bps").get<double>();
      d.link.latency_s = jd.at("link").at("latency_s").get<double>();
      d.send_cpu_s = jd.at("link").value("send_cpu_s", 0.0);
      d.recv_cpu_s = jd.at("link").value("recv_cpu_s", 0.0);
      d.send_cpu_per_byte_s = jd.at("link").value("send_cpu_per_byte_s", 0.0);
      d.recv_cpu_per_byte_s = jd.at("link").value("recv_cpu_per_byte_s", 0.0);
      d.idle_cpu_per_s = jd.value("idle_cpu_per_s", 0.0);
      if (jd.contains("cpu_quota")) {
        d.has_cpu_quota = true;
        d.cpu_quota.quota_s = jd["cpu_quota"].at("quota_s").get<double>();
        d.cpu_quota.period_s = jd["cpu_quota"].at("period_s").get<double>();
      }
      d.cpu_pace = jd.value("cpu_pace", 0.0);
      if (!(d.cpu_pace >= 0 && d.cpu_pace <= 1024)) {
        return InvalidArgument(path + ": device " + d.name + " has cpu_pace " +
                               std::to_string(d.cpu_pace) +
                               " (a fraction of a core, 0 to 1024)");
      }
      const nlohmann::json fits = jd.value("fits", nlohmann::json::object());
      for (const auto& [op, jf] : fits.items()) {
        OpFit fit;
        fit.intercept_s = jf.at("intercept_s").get<double>();
        fit.per_mac_s = jf.at("per_mac_s").get<double>();
        fit.per_byte_s = jf.at("per_byte_s").get<double>();
        fit.samples = jf.value("samples", 0);
        d.fits[op] = fit;
      }
      const nlohmann::json samples =
          jd.value("samples", nlohmann::json::array());
      for (const auto& js : samples) {
        LayerSample s;
        s.model = js.value("model", "");
        s.layer = js.value("layer", "");
        s.variant = js.value("variant", "");
        s.op = js.at("op").get<std::string>();
        s.macs = js.at("macs").get<int64_t>();
        s.bytes = js.at("bytes").get<int64_t>();
        s.seconds = js.at("seconds").get<double>();
        s.cpu_seconds = js.value("cpu_seconds", 0.0);
        s.alone_seconds = js.value("alone_seconds", 0.0);
        s.alone_cpu_seconds = js.value("alone_cpu_seconds", 0.0);
        d.samples.push_back(s);
      }
      p.devices.push_back(std::move(d));
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument("profile " + path + ": " + e.what());
  }
  return p;
}

}  // namespace shoal
