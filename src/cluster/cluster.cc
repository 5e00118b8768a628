#include "cluster/cluster.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "cluster/swap.h"
#include "security/device_name.h"
#include "util/read_file.h"

namespace shoal {

namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 50;
// Bounds of a link in a cluster file: below 1 kbit/s one message of a small
// model takes hours, and the simulator would step through all of them.
constexpr double kMinBandwidthBps = 1e3, kMaxBandwidthBps = 1e13;
constexpr double kMaxLatencyS = 60;
constexpr int kMaxCores = 1024;
constexpr double kMaxHostCores = 1024;
// The smallest CPU share `cluster up` emulates: the kernel's minimum
// quota (1 ms) in a period of 1 s (cluster/cpu_quota.h).
constexpr double kMinHostCores = 1e-3;

// Numbers of a device, each within its bounds: NaN, infinities and
// extremes would make plan and simulate spin or a cgroup refuse them.
Status CheckDeviceNumbers(const DeviceSpec& d) {
  auto cores_ok = [](double v, double lo) {
    return v == 0 || (v >= lo && v <= kMaxHostCores);
  };
  if (!(d.speed >= kMinShare && d.speed <= kMaxShare)) {
    return InvalidArgument("speed " + std::to_string(d.speed) +
                           " is outside [" + std::to_string(kMinShare) + ", " +
                           std::to_string(kMaxShare) + "]");
  }
  if (d.cores < 1 || d.cores > kMaxCores) {
    return InvalidArgument("cores must be 1 to " + std::to_string(kMaxCores));
  }
  if (!cores_ok(d.cpu, kMinHostCores)) {
    return InvalidArgument(
        "cpu must be a number of host cores, 0 (not limited) or within "
        "[0.001, 1024]");
  }
  if (!cores_ok(d.system_cpu, kMinHostCores)) {
    return InvalidArgument(
        "system_cpu must be a number of host cores, 0 or within "
        "[0.001, 1024]");
  }
  if (d.memory_bytes < 0) return InvalidArgument("memory must not be negative");
  return Status::Ok();
}

// The `power` block: any of idle, busy (watts), send, receive (joules per
// byte); what it leaves out keeps the Raspberry Pi 3 figure.
Status ParsePowerBlock(const YAML::Node& y, PowerSpec* p) {
  if (!y.IsMap()) {
    return InvalidArgument(
        "power must be a map like {idle: 1.22W, busy: 3.95W, send: 100nJ/B}");
  }
  for (const auto& kv : y) {
    const std::string k = kv.first.as<std::string>();
    const std::string v = kv.second.as<std::string>();
    StatusOr<double> x = InvalidArgument("");
    double* field = nullptr;
    if (k == "idle" || k == "busy") {
      x = ParsePower(v);
      field = k == "idle" ? &p->idle_w : &p->busy_w;
    } else if (k == "send" || k == "receive") {
      x = ParseEnergyPerByte(v);
      field = k == "send" ? &p->send_j_per_byte : &p->receive_j_per_byte;
    } else {
      return InvalidArgument("power has an unknown key '" + k +
                             "' (known: idle, busy, send, receive)");
    }
    if (!x.ok()) return x.status().WithContext("power " + k);
    *field = x.value();
  }
  p->given = true;
  return CheckPower(*p);
}

Status CheckLink(const YAML::Node& l, const Link& link) {
  if (l["bandwidth"] && !(link.bandwidth_bps >= kMinBandwidthBps &&
                          link.bandwidth_bps <= kMaxBandwidthBps)) {
    return InvalidArgument(
        "link bandwidth must be within 1Kbit and 10000Gbit (leave it out for "
        "an unlimited link)");
  }
  if (!(link.latency_s >= 0 && link.latency_s <= kMaxLatencyS)) {
    return InvalidArgument("link latency must be within 0 and 60s");
  }
  return Status::Ok();
}

// The cluster's `network` block: {medium: shared, bandwidth: RATE}, or
// {medium: links} (each device's link only, as without the block).
Status ParseNetwork(const YAML::Node& y, const std::string& origin, Medium* m) {
  const std::string where = origin + ": network";
  if (!y.IsMap()) {
    return InvalidArgument(where +
                           " must be a map like {medium: shared, bandwidth: "
                           "62Mbit}");
  }
  for (const auto& kv : y) {
    const std::string k = kv.first.as<std::string>();
    if (k != "medium" && k != "bandwidth") {
      return InvalidArgument(where + " has an unknown key '" + k +
                             "' (medium, bandwidth)");
    }
  }
  const std::string medium =
      y["medium"] ? y["medium"].as<std::string>() : "links";
  if (medium != "shared" && medium != "links") {
    return InvalidArgument(where + ": medium '" + medium +
                           "' is neither shared (one channel for every "
                           "device) nor links (each device's own)");
  }
  m->shared = medium == "shared";
  if (!m->shared) {
    if (y["bandwidth"]) {
      return InvalidArgument(where +
                             ": bandwidth is the shared medium's; with "
                             "medium: links each device's link has its own");
    }
    return Status::Ok();
  }
  if (!y["bandwidth"]) {
    return InvalidArgument(where + ": a shared medium needs a bandwidth");
  }
  auto bw = ParseBitRate(y["bandwidth"].as<std::string>());
  if (!bw.ok()) return bw.status().WithContext(where);
  m->bandwidth_bps = bw.value();
  if (!(m->bandwidth_bps >= kMinBandwidthBps &&
        m->bandwidth_bps <= kMaxBandwidthBps)) {
    return InvalidArgument(where +
                           ": bandwidth must be within 1Kbit and 10000Gbit");
  }
  return Status::Ok();
}

// A device's `accelerator` block: {kind: systolic, rows: 32, ...}.
Status ParseAcceleratorBlock(const YAML::Node& y, AcceleratorSpec* a) {
  if (!y.IsMap()) {
    return InvalidArgument(
        "accelerator must be a map like {kind: systolic, rows: 32, cols: 64, "
        "clock: 53MHz}");
  }
  if (!y["kind"] || y["kind"].as<std::string>() != "systolic") {
    return InvalidArgument(
        "accelerator needs kind: systolic (the LCP paper's array, the one "
        "kind shoal models)");
  }
  for (const auto& kv : y) {
    const std::string k = kv.first.as<std::string>();
    if (k == "kind") continue;
    RETURN_IF_ERROR(SetAcceleratorKey(k, kv.second.as<std::string>(), a));
  }
  a->present = true;
  return CheckAccelerator(*a);
}

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
  return std::isfinite(*value) && *value >= 0;
}

// The keys of a `tls` map, each a non-empty string; any other key is an
// error (a misspelt `cert` would otherwise leave TLS half set up).
Status ReadTlsMap(const YAML::Node& y, const std::string& where,
                  const std::vector<std::string>& allowed,
                  std::map<std::string, std::string>* out) {
  if (!y.IsMap()) {
    return InvalidArgument(where + ": tls must be a map like {dir: certs}");
  }
  for (const auto& kv : y) {
    const std::string k = kv.first.as<std::string>();
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      return InvalidArgument(where + ": tls has an unknown key '" + k +
                             "' (known: " + list + ")");
    }
    const std::string v = kv.second.as<std::string>();
    if (v.empty()) return InvalidArgument(where + ": tls " + k + " is empty");
    (*out)[k] = v;
  }
  return Status::Ok();
}

// The cluster's `tls` block: a directory of `shoal certs` files, or the
// coordinator's three files named one by one.
Status ParseClusterTls(const YAML::Node& y, const std::string& origin,
                       Cluster* c) {
  std::map<std::string, std::string> m;
  RETURN_IF_ERROR(
      ReadTlsMap(y, origin, {"dir", "ca", "cert", "key", "crl"}, &m));
  c->tls_dir = m["dir"];
  if (!c->tls_dir.empty()) {
    c->tls = IssuedPaths(c->tls_dir, "coordinator");
  }
  if (m.count("ca")) c->tls.ca = m["ca"];
  if (m.count("cert")) c->tls.cert = m["cert"];
  if (m.count("key")) c->tls.key = m["key"];
  if (m.count("crl")) c->tls.crl = m["crl"];
  if (c->tls.ca.empty() || c->tls.cert.empty() || c->tls.key.empty()) {
    return InvalidArgument(origin +
                           ": tls needs dir, or all of ca, cert and key");
  }
  return Status::Ok();
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
      if (u != name) continue;
      // Checked as a double: the cast of 1e30 GiB to int64 is undefined.
      if (!(v * mult <= static_cast<double>(kMaxBytes))) {
        return InvalidArgument("'" + text + "' is more than 1 PiB");
      }
      return static_cast<int64_t>(v * mult);
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
    // A board that swaps (cluster/swap.h) is not refused a plan larger
    // than its memory: the plan pays for the paging instead.
    const bool pages = FrameworkMemoryOf(d.board) != nullptr;
    out.push_back(PlanDevice{d.name, d.speed, pages ? 0 : d.memory_bytes});
  }
  return out;
}

std::vector<double> Cluster::UplinkRates() const {
  std::vector<double> out;
  for (const auto& d : devices) out.push_back(d.link.bandwidth_bps);
  return out;
}

double Cluster::MaxLinkLatency() const {
  double most = 0;
  for (const auto& d : devices) most = std::max(most, d.link.latency_s);
  return most;
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
    if (const YAML::Node& t = root["tls"]) {
      RETURN_IF_ERROR(ParseClusterTls(t, origin, &c));
    }
    if (const YAML::Node& n = root["network"]) {
      RETURN_IF_ERROR(ParseNetwork(n, origin, &c.network));
    }
    std::set<std::string> names, addresses;
    for (size_t i = 0; i < devs.size(); ++i) {
      const YAML::Node& y = devs[i];
      const std::string where = origin + ": device " + std::to_string(i);
      DeviceSpec d;
      // A field of the wrong type names its device, not just a line.
      try {
        if (!y["name"]) return InvalidArgument(where + " has no name");
        d.name = y["name"].as<std::string>();
        RETURN_IF_ERROR(CheckDeviceName(d.name).WithContext(where));
        if (!names.insert(d.name).second) {
          return InvalidArgument(where + ": name '" + d.name + "' used twice");
        }
        if (y["address"]) d.address = y["address"].as<std::string>();
        // Two devices on one address would be one worker deployed twice.
        if (!d.address.empty() && !addresses.insert(d.address).second) {
          return InvalidArgument(where + " (" + d.name + "): address '" +
                                 d.address + "' is another device's too");
        }
        if (y["board"]) {
          const std::string b = y["board"].as<std::string>();
          d.board = FindBoard(b);
          if (d.board == nullptr) {
            return InvalidArgument(where + " (" + d.name + "): board '" + b +
                                   "' is not a known class (" + BoardNames() +
                                   ")");
          }
          d.cores = d.board->cores;
          d.memory_bytes = d.board->memory_bytes;
          d.link.bandwidth_bps = d.board->link_bandwidth_bps;
          d.link.latency_s = d.board->link_latency_s;
          d.power = d.board->power;
        }
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
          // A named board is emulated by its class's times, not a share of
          // a host core (docs/cluster-format.md); but the LCP paper's Pi 3
          // is what `speed: 1` always was, a calibrated share.
          d.cpu_from_speed =
              d.board ? d.board->lcp_paper : static_cast<bool>(y["speed"]);
        }
        if (y["system_cpu"]) d.system_cpu = y["system_cpu"].as<double>();
        RETURN_IF_ERROR(
            CheckDeviceNumbers(d).WithContext(where + " (" + d.name + ")"));
        if (d.board != nullptr) {
          d.board_speed = d.speed;
          d.speed = RelativeSpeed(*d.board) * d.board_speed;
        }
        if (const YAML::Node& pw = y["power"]) {
          RETURN_IF_ERROR(ParsePowerBlock(pw, &d.power)
                              .WithContext(where + " (" + d.name + ")"));
        }
        if (const YAML::Node& ac = y["accelerator"]) {
          RETURN_IF_ERROR(ParseAcceleratorBlock(ac, &d.accelerator)
                              .WithContext(where + " (" + d.name + ")"));
        }
        if (!c.tls_dir.empty()) d.tls = IssuedPaths(c.tls_dir, d.name);
        if (const YAML::Node& t = y["tls"]) {
          if (!c.tls.any()) {
            return InvalidArgument(where + " (" + d.name +
                                   "): tls of a device needs the cluster's "
                                   "tls block (the CA)");
          }
          std::map<std::string, std::string> m;
          RETURN_IF_ERROR(
              ReadTlsMap(t, where + " (" + d.name + ")", {"cert", "key"}, &m));
          if (m.count("cert")) d.tls.cert = m["cert"];
          if (m.count("key")) d.tls.key = m["key"];
        }
        if (d.tls.any()) {
          d.tls.ca = c.tls.ca;
          d.tls.crl = c.tls.crl;
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
          RETURN_IF_ERROR(
              CheckLink(l, d.link).WithContext(where + " (" + d.name + ")"));
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
  } catch (const std::exception& e) {  // bad_alloc on a hostile file
    return InvalidArgument(origin + ": cannot be read: " + e.what());
  }
  return c;
}

StatusOr<Cluster> LoadCluster(const std::string& path) {
  // A cluster of thousands of devices is a few hundred KB.
  ASSIGN_OR_RETURN(const std::string text,
                   ReadBoundedFile(path, int64_t{16} << 20, "cluster file"));
  ASSIGN_OR_RETURN(Cluster c, ParseCluster(text, "cluster file " + path));
  // Files named in the cluster file are where it is, not where shoal runs.
  const std::filesystem::path base = std::filesystem::path(path).parent_path();
  auto resolve = [&](std::string* p) {
    if (!p->empty() && std::filesystem::path(*p).is_relative()) {
      *p = (base / *p).lexically_normal().string();
    }
  };
  auto resolve_all = [&](TlsPaths* t) {
    resolve(&t->ca);
    resolve(&t->cert);
    resolve(&t->key);
    resolve(&t->crl);
  };
  resolve_all(&c.tls);
  resolve(&c.tls_dir);
  for (auto& d : c.devices) resolve_all(&d.tls);
  // `tls: {dir: D}` takes D's revocation list once `shoal certs revoke`
  // has made one.
  if (!c.tls_dir.empty() && c.tls.crl.empty()) {
    const std::string crl = c.tls_dir + "/crl.pem";
    std::error_code ec;
    if (std::filesystem::exists(crl, ec)) {
      c.tls.crl = crl;
      for (auto& d : c.devices) {
        if (d.tls.any()) d.tls.crl = crl;
      }
    }
  }
  return c;
}

}  // namespace shoal
