#include "cluster/cluster_writer.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace shoal {
namespace {

// The shortest text that reads back as exactly `v`.
std::string Shortest(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);
  return std::string(buf, r.ptr);
}

// `v` in the largest of `units` it is at least 1 of, with up to 6 digits,
// where that reads back (as the parser multiplies) within rounding: "62Mbit",
// "8.83ms"; otherwise exactly, in the unit of multiplier 1 (last).
std::string WithUnit(
    double v, std::initializer_list<std::pair<const char*, double>> units) {
  for (const auto& [name, mult] : units) {
    if (v / mult < 1 && mult != 1) continue;
    char num[32];
    std::snprintf(num, sizeof(num), "%.6g", v / mult);
    if (std::fabs(std::stod(num) * mult - v) <= 1e-12 * v) {
      return num + std::string(name);
    }
    break;
  }
  return Shortest(v) + std::data(units)[units.size() - 1].first;
}

void EmitTls(YAML::Emitter& out, const TlsPaths& t, bool device) {
  out << YAML::Key << "tls" << YAML::Value << YAML::Flow << YAML::BeginMap;
  if (!device) out << YAML::Key << "ca" << YAML::Value << t.ca;
  out << YAML::Key << "cert" << YAML::Value << t.cert;
  out << YAML::Key << "key" << YAML::Value << t.key;
  if (!device && !t.crl.empty()) {
    out << YAML::Key << "crl" << YAML::Value << t.crl;
  }
  out << YAML::EndMap;
}

void EmitDevice(YAML::Emitter& out, const DeviceSpec& d, const Cluster& c) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "name" << YAML::Value << d.name;
  if (!d.address.empty()) {
    out << YAML::Key << "address" << YAML::Value << d.address;
  }
  if (d.memory_bytes > 0) {
    out << YAML::Key << "memory" << YAML::Value << FormatBytes(d.memory_bytes);
  }
  if (d.cores != 1) out << YAML::Key << "cores" << YAML::Value << d.cores;
  if (d.board != nullptr) {
    // On a named board `speed` is a multiplier on its class and implies no
    // cpu share.
    out << YAML::Key << "board" << YAML::Value << d.board->name;
    if (d.board_speed != 1.0) {
      out << YAML::Key << "speed" << YAML::Value << Shortest(d.board_speed);
    }
    if (d.cpu_from_speed != d.board->lcp_paper || d.cpu > 0) {
      if (d.cpu_from_speed) {
        out << YAML::Key << "cpu" << YAML::Value << "auto";
      } else {
        out << YAML::Key << "cpu" << YAML::Value << Shortest(d.cpu);
      }
    }
  }
  // An absent speed is 1, and a present one means `cpu: auto` unless a cpu
  // follows: keep what the parser will infer equal to what is held.
  const bool speed_written = d.board == nullptr && d.speed != 1.0;
  if (speed_written) {
    out << YAML::Key << "speed" << YAML::Value << Shortest(d.speed);
  }
  if (d.board != nullptr) {
  } else if (d.cpu_from_speed && !speed_written) {
    out << YAML::Key << "cpu" << YAML::Value << "auto";
  } else if (!d.cpu_from_speed && (d.cpu > 0 || speed_written)) {
    out << YAML::Key << "cpu" << YAML::Value << Shortest(d.cpu);
  }
  if (d.system_cpu > 0) {
    out << YAML::Key << "system_cpu" << YAML::Value << Shortest(d.system_cpu);
  }
  if (d.link.bandwidth_bps > 0 || d.link.latency_s > 0) {
    out << YAML::Key << "link" << YAML::Value << YAML::BeginMap;
    if (d.link.bandwidth_bps > 0) {
      out << YAML::Key << "bandwidth" << YAML::Value
          << FormatBitRate(d.link.bandwidth_bps);
    }
    if (d.link.latency_s > 0) {
      out << YAML::Key << "latency" << YAML::Value
          << FormatDuration(d.link.latency_s);
    }
    out << YAML::EndMap;
  }
  if (d.power.given) {
    const PowerSpec& p = d.power;
    out << YAML::Key << "power" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "idle" << YAML::Value << Shortest(p.idle_w) + "W";
    out << YAML::Key << "busy" << YAML::Value << Shortest(p.busy_w) + "W";
    for (const auto& [key, v] :
         {std::pair<const char*, double>{"send", p.send_j_per_byte},
          {"receive", p.receive_j_per_byte}}) {
      if (v > 0) {
        out << YAML::Key << key << YAML::Value
            << WithUnit(v, {{"nJ/B", 1e-9}, {"J/B", 1}});
      }
    }
    out << YAML::EndMap;
  }
  // Under `tls: {dir}` a device's files are DIR/NAME.{crt,key} unless
  // named; write them only where they differ.
  const TlsPaths issued =
      c.tls_dir.empty() ? TlsPaths{} : IssuedPaths(c.tls_dir, d.name);
  if ((!d.tls.cert.empty() || !d.tls.key.empty()) &&
      (d.tls.cert != issued.cert || d.tls.key != issued.key)) {
    EmitTls(out, d.tls, true);
  }
  out << YAML::EndMap;
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  // Whole units only: "1536MiB", not "1.5GiB".
  for (const auto& [name, unit] :
       {std::pair<const char*, int64_t>{"GiB", int64_t{1} << 30},
        {"MiB", int64_t{1} << 20},
        {"KiB", int64_t{1} << 10}}) {
    if (bytes > 0 && bytes % unit == 0) {
      return std::to_string(bytes / unit) + name;
    }
  }
  return std::to_string(bytes);
}

std::string FormatBitRate(double bps) {
  return WithUnit(bps,
                  {{"Gbit", 1e9}, {"Mbit", 1e6}, {"Kbit", 1e3}, {"bit", 1}});
}

std::string FormatDuration(double seconds) {
  if (seconds >= 1) return Shortest(seconds) + "s";
  return WithUnit(seconds, {{"ms", 1e-3}, {"us", 1e-6}, {"s", 1}});
}

std::string FormatCluster(const Cluster& c, const std::string& header) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  if (c.tls.any()) {
    if (!c.tls_dir.empty() &&
        c.tls.ca == IssuedPaths(c.tls_dir, "coordinator").ca &&
        c.tls.cert == IssuedPaths(c.tls_dir, "coordinator").cert &&
        c.tls.key == IssuedPaths(c.tls_dir, "coordinator").key) {
      out << YAML::Key << "tls" << YAML::Value << YAML::Flow << YAML::BeginMap
          << YAML::Key << "dir" << YAML::Value << c.tls_dir;
      // The directory's own list is found there again.
      if (!c.tls.crl.empty() && c.tls.crl != c.tls_dir + "/crl.pem") {
        out << YAML::Key << "crl" << YAML::Value << c.tls.crl;
      }
      out << YAML::EndMap;
    } else {
      EmitTls(out, c.tls, false);
    }
  }
  out << YAML::Key << "devices" << YAML::Value << YAML::BeginSeq;
  for (const auto& d : c.devices) EmitDevice(out, d, c);
  out << YAML::EndSeq << YAML::EndMap;
  std::string text;
  std::istringstream lines(header);
  for (std::string line; std::getline(lines, line);) {
    text += "# " + line + "\n";
  }
  return text + out.c_str() + "\n";
}

Status WriteClusterFile(const Cluster& c, const std::string& path,
                        const std::string& header) {
  std::ofstream f(path, std::ios::trunc);
  if (!f) return InvalidArgument("cannot write cluster file " + path);
  f << FormatCluster(c, header);
  f.close();
  if (!f) return InvalidArgument("cannot write cluster file " + path);
  return Status::Ok();
}

}  // namespace shoal
