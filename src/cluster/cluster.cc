#include "cluster/cluster.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

namespace shoal {

namespace {

// Splits "62Mbit" into 62 and "Mbit".
bool SplitNumber(const std::string& text, double* value, std::string* unit) {
  size_t i = 0;
  while (i < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.' ||
          text[i] == 'e' || text[i] == '+' || text[i] == '-')) {
    ++i;
  }
  if (i == 0) return false;
  try {
    *value = std::stod(text.substr(0, i));
  } catch (...) {
    return false;
  }
  *unit = text.substr(i);
  while (!unit->empty() && unit->front() == ' ') unit->erase(0, 1);
  return *value >= 0;
}

}  // namespace

StatusOr<int64_t> ParseBytes(const std::string& text) {
  double v;
  std::string u;
  if (SplitNumber(text, &v, &u)) {
    static const std::pair<const char*, double> kUnits[] = {
        {"", 1},
        {"B", 1},
        {"KB", 1e3},
        {"MB", 1e6},
        {"GB", 1e9},
        {"KiB", 1024.0},
        {"MiB", 1048576.0},
        {"GiB", 1073741824.0}};
    for (const auto& [name, mult] : kUnits) {
      if (u == name) return static_cast<int64_t>(v * mult);
    }
  }
  return InvalidArgument("'" + text +
                         "' is not a size (e.g. 1GiB, 512MB, 1048576)");
}

StatusOr<double> ParseBitRate(const std::string& text) {
  double v;
  std::string u;
  if (SplitNumber(text, &v, &u)) {
    static const std::pair<const char*, double> kUnits[] = {
        {"bit", 1}, {"Kbit", 1e3}, {"Mbit", 1e6}, {"Gbit", 1e9},
        {"bps", 1}, {"Kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}};
    for (const auto& [name, mult] : kUnits) {
      if (u == name) return v * mult;
    }
  }
  return InvalidArgument("'" + text +
                         "' is not a bandwidth (e.g. 62Mbit, 1Gbit)");
}

StatusOr<double> ParseDuration(const std::string& text) {
  double v;
  std::string u;
  if (SplitNumber(text, &v, &u)) {
    if (u == "s") return v;
    if (u == "ms") return v * 1e-3;
    if (u == "us") return v * 1e-6;
  }
  return InvalidArgument("'" + text + "' is not a duration (e.g. 9ms, 1s)");
}

std::vector<PlanDevice> Cluster::PlanDevices() const {
  std::vector<PlanDevice> out;
  for (const auto& d : devices) {
    out.push_back(PlanDevice{d.name, d.speed, d.memory_bytes});
  }
  return out;
}

Cluster EqualCluster(int n) {
  Cluster c;
  for (int i = 0; i < n; ++i) {
    DeviceSpec d;
    d.name = "dev" + std::to_string(i);
    c.devices.push_back(d);
  }
  return c;
}

StatusOr<Cluster> ParseCluster(const std::string& text,
                               const std::string& origin) {
  Cluster c;
  try {
    YAML::Node root = YAML::Load(text);
    YAML::Node devs = root["devices"];
    if (!devs || !devs.IsSequence() || devs.size() == 0) {
      return InvalidArgument(origin + ": needs a non-empty 'devices' list");
    }
    std::set<std::string> names;
    for (size_t i = 0; i < devs.size(); ++i) {
      const YAML::Node& y = devs[i];
      const std::string where = origin + ": device " + std::to_string(i);
      DeviceSpec d;
      // A field of the wrong type names its device, not just a line.
      try {
        if (!y["name"]) return InvalidArgument(where + " has no name");
        d.name = y["name"].as<std::string>();
        if (!names.insert(d.name).second) {
          return InvalidArgument(where + ": name '" + d.name + "' used twice");
        }
        if (y["address"]) d.address = y["address"].as<std::string>();
        if (y["memory"]) {
          auto b = ParseBytes(y["memory"].as<std::string>());
          if (!b.ok())
            return b.status().WithContext(where + " (" + d.name + ") memory");
          d.memory_bytes = b.value();
        }
        if (y["cores"]) d.cores = y["cores"].as<int>();
        d.speed = y["speed"] ? y["speed"].as<double>() : 1.0;
        if (y["cpu"] && y["cpu"].as<std::string>() == "auto") {
          d.cpu_from_speed = true;
        } else if (y["cpu"]) {
          d.cpu = y["cpu"].as<double>();
        } else {
          d.cpu_from_speed = static_cast<bool>(y["speed"]);
        }
        if (y["system_cpu"]) d.system_cpu = y["system_cpu"].as<double>();
        if (!(d.system_cpu >= 0 && d.system_cpu <= 1024)) {
          return InvalidArgument(
              where + " (" + d.name +
              "): system_cpu must be a number of host cores >= 0");
        }
        if (d.cpu < 0 || d.cpu > 1024) {
          return InvalidArgument(where + " (" + d.name +
                                 "): cpu must be a number of host cores >= 0");
        }
        if (d.cores < 1 || !(d.speed > 0)) {
          return InvalidArgument(where + " (" + d.name +
                                 "): cores and speed must be positive");
        }
        if (const YAML::Node& l = y["link"]) {
          if (l["bandwidth"]) {
            auto bw = ParseBitRate(l["bandwidth"].as<std::string>());
            if (!bw.ok())
              return bw.status().WithContext(where + " (" + d.name + ") link");
            d.link.bandwidth_bps = bw.value();
          }
          if (l["latency"]) {
            auto lat = ParseDuration(l["latency"].as<std::string>());
            if (!lat.ok())
              return lat.status().WithContext(where + " (" + d.name + ") link");
            d.link.latency_s = lat.value();
          }
        }
      } catch (const YAML::Exception& e) {
        return InvalidArgument(where +
                               (d.name.empty() ? "" : " (" + d.name + ")") +
                               ": " + e.what());
      }
      c.devices.push_back(d);
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": " + e.what());
  }
  return c;
}

StatusOr<Cluster> LoadCluster(const std::string& path) {
  std::ifstream f(path);
  if (!f) return NotFound("cannot open cluster file " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ParseCluster(ss.str(), "cluster file " + path);
}

}  // namespace shoal
