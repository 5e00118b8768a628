#include "cli/worker_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "cluster/cluster.h"
#include "engine/executor.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

enum class Kind { kText, kAddress, kBytes, kCount, kBackend, kPath, kBool };

struct Key {
  const char* name;
  Kind kind;
};

// The settings of a device; the emulation flags (--cpu-fraction,
// --link-*) stay on the command line, where `cluster up` gives them.
constexpr Key kKeys[] = {
    {"listen", Kind::kAddress},   {"name", Kind::kText},
    {"memory", Kind::kBytes},     {"threads", Kind::kCount},
    {"backend", Kind::kBackend},  {"cache-dir", Kind::kPath},
    {"cache-size", Kind::kBytes}, {"max-message", Kind::kBytes},
    {"metrics", Kind::kAddress},  {"announce", Kind::kBool},
};
constexpr const char* kTlsKeys[] = {"ca", "cert", "key"};

std::string KnownKeys() {
  std::string s;
  for (const Key& k : kKeys) s += std::string(s.empty() ? "" : ", ") + k.name;
  return s + ", tls";
}

std::string Absolute(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/') return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

Status CheckValue(const Key& k, const std::string& v) {
  if (v.empty()) return InvalidArgument("is empty");
  switch (k.kind) {
    case Kind::kAddress: {
      ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(v, k.name));
      if (hp.port < 0) return InvalidArgument("'" + v + "' needs a port");
      return Status::Ok();
    }
    case Kind::kBytes:
      return ParseBytes(v).status();
    case Kind::kCount: {
      const bool digits = std::all_of(
          v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || v.size() > 4) {
        return InvalidArgument("'" + v +
                               "' is not a count of threads (0: one per core)");
      }
      return Status::Ok();
    }
    case Kind::kBackend:
      return ParseBackend(v).status();
    case Kind::kBool:
      if (v != "true" && v != "false") {
        return InvalidArgument("'" + v + "' is not true or false");
      }
      return Status::Ok();
    case Kind::kText:
    case Kind::kPath:
      return Status::Ok();
  }
  return Status::Ok();
}

}  // namespace

StatusOr<WorkerSettings> ParseWorkerConfig(const std::string& text,
                                           const std::string& origin,
                                           const std::string& base_dir) {
  WorkerSettings out;
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return out;  // an empty file: every default
    if (!root.IsMap()) {
      return InvalidArgument(origin +
                             ": must be a map of settings like 'listen: "
                             "0.0.0.0:7000' (keys: " +
                             KnownKeys() + ")");
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const std::string where = origin + ": " + key;
      if (key == "tls") {
        if (!kv.second.IsMap()) {
          return InvalidArgument(where +
                                 " must be a map like {ca: ca.crt, cert: "
                                 "pi0.crt, key: pi0.key}");
        }
        for (const auto& t : kv.second) {
          const std::string tk = t.first.as<std::string>();
          if (std::find_if(std::begin(kTlsKeys), std::end(kTlsKeys),
                           [&](const char* k) { return tk == k; }) ==
              std::end(kTlsKeys)) {
            return InvalidArgument(where + " has an unknown key '" + tk +
                                   "' (known: ca, cert, key)");
          }
          if (!t.second.IsScalar() || t.second.as<std::string>().empty()) {
            return InvalidArgument(where + " " + tk + " must be a file name");
          }
          out["--tls-" + tk] = Absolute(t.second.as<std::string>(), base_dir);
        }
        continue;
      }
      const Key* k = std::find_if(std::begin(kKeys), std::end(kKeys),
                                  [&](const Key& x) { return key == x.name; });
      if (k == std::end(kKeys)) {
        return InvalidArgument(origin + ": unknown key '" + key +
                               "' (known: " + KnownKeys() + ")");
      }
      if (!kv.second.IsScalar()) {
        return InvalidArgument(where + " must be a single value, not a " +
                               (kv.second.IsMap() ? "map" : "list"));
      }
      const std::string v = kv.second.as<std::string>();
      if (Status s = CheckValue(*k, v); !s.ok()) return s.WithContext(where);
      out[std::string("--") + key] =
          k->kind == Kind::kPath ? Absolute(v, base_dir) : v;
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": " + e.what());
  }
  return out;
}

StatusOr<WorkerSettings> LoadWorkerConfig(const std::string& path) {
  std::ifstream f(path);
  if (!f) {
    return NotFound("--config " + path +
                    ": cannot open: " + std::strerror(errno));
  }
  // A config is a few lines; a huge file is a mistake (a binary named by
  // accident), refused before YAML parses it.
  constexpr std::streamsize kMaxBytes = 1 << 20;
  std::string text(kMaxBytes + 1, '\0');
  f.read(text.data(), kMaxBytes + 1);
  text.resize(f.gcount());
  if (static_cast<std::streamsize>(text.size()) > kMaxBytes) {
    return InvalidArgument("--config " + path +
                           ": larger than 1 MiB; a worker's config is a few "
                           "lines of YAML");
  }
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return ParseWorkerConfig(text, path, abs.parent_path().string());
}

}  // namespace shoal
