#include "discovery/worker_txt.h"

#include <charconv>

#include "security/device_name.h"

namespace shoal {
namespace {

constexpr size_t kMaxVersionLength = 32;

// A whole decimal number within [lo, hi], or an error naming `key`.
StatusOr<int64_t> ReadInt(const std::map<std::string, std::string>& txt,
                          const std::string& key, int64_t lo, int64_t hi) {
  const std::string& v = txt.at(key);
  int64_t n = 0;
  auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() ||
      n < lo || n > hi) {
    return InvalidArgument("its " + key + " is not a number within " +
                           std::to_string(lo) + " and " + std::to_string(hi));
  }
  return n;
}

}  // namespace

std::vector<std::string> EncodeWorkerTxt(const WorkerAdvert& a) {
  return {"txtvers=1",
          "name=" + a.name,
          "cores=" + std::to_string(a.cores),
          "memory=" + std::to_string(a.memory_bytes),
          "version=" + a.version,
          "protocol=" + std::to_string(a.protocol),
          std::string("tls=") + (a.tls ? "on" : "off")};
}

std::map<std::string, std::string> TxtEntries(
    const std::vector<std::string>& txt) {
  std::map<std::string, std::string> m;
  for (const auto& e : txt) {
    const size_t eq = e.find('=');
    // RFC 6763 6.4: the first occurrence of a key counts.
    m.emplace(e.substr(0, eq), eq == std::string::npos ? "" : e.substr(eq + 1));
  }
  return m;
}

StatusOr<WorkerAdvert> DecodeWorkerTxt(
    const std::map<std::string, std::string>& txt) {
  for (const char* key : {"name", "protocol", "version"}) {
    if (!txt.count(key)) {
      return InvalidArgument(std::string("its TXT record has no ") + key);
    }
  }
  WorkerAdvert a;
  a.name = txt.at("name");
  if (Status s = CheckDeviceName(a.name); !s.ok()) {
    return s.WithContext("its name");
  }
  ASSIGN_OR_RETURN(int64_t protocol, ReadInt(txt, "protocol", 0, UINT32_MAX));
  a.protocol = static_cast<uint32_t>(protocol);
  a.version = txt.at("version");
  if (a.version.empty() || a.version.size() > kMaxVersionLength ||
      a.version.find_first_not_of("0123456789abcdefghijklmnopqrstuvwxyz"
                                  "ABCDEFGHIJKLMNOPQRSTUVWXYZ.-+~_") !=
          std::string::npos) {
    return InvalidArgument("its version is not a release number like 0.1.0");
  }
  if (txt.count("cores")) {
    ASSIGN_OR_RETURN(int64_t cores, ReadInt(txt, "cores", 1, 1024));
    a.cores = static_cast<int>(cores);
  }
  if (txt.count("memory")) {
    ASSIGN_OR_RETURN(a.memory_bytes,
                     ReadInt(txt, "memory", 0, int64_t{1} << 50));
  }
  if (txt.count("tls")) {
    const std::string& t = txt.at("tls");
    if (t != "on" && t != "off")
      return InvalidArgument("its tls is not on or off");
    a.tls = t == "on";
  }
  return a;
}

}  // namespace shoal
