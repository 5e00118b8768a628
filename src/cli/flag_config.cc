#include "cli/flag_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "cli/commands.h"
#include "cluster/cluster.h"
#include "engine/executor.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> Words(const char* choices) {
  std::vector<std::string> out;
  const std::string s = choices == nullptr ? "" : choices;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t bar = std::min(s.find('|', start), s.size());
    out.push_back(s.substr(start, bar - start));
    start = bar + 1;
  }
  return out;
}

std::string Join(const std::vector<std::string>& words, const char* sep) {
  std::string s;
  for (const std::string& w : words) s += (s.empty() ? "" : sep) + w;
  return s;
}

std::string KnownKeys(const FlagConfigSpec& spec) {
  std::vector<std::string> names;
  for (const FlagKey& k : spec.keys) names.push_back(k.name);
  return Join(names, ", ");
}

std::string Absolute(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/') return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// "in [1, 10)", "above 1", "at least 0": the range as a person reads it.
std::string RangeText(const FlagKey& k) {
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.15g", v);
    return std::string(b);
  };
  if (std::isinf(k.hi) || k.hi == kFlagIntMax) {
    return (k.lo_open ? "above " : "at least ") + num(k.lo);
  }
  return "in " + std::string(k.lo_open ? "(" : "[") + num(k.lo) + ", " +
         num(k.hi) + (k.hi_open ? ")" : "]");
}

bool InRange(const FlagKey& k, double v) {
  return (k.lo_open ? v > k.lo : v >= k.lo) &&
         (k.hi_open ? v < k.hi : v <= k.hi);
}

Status CheckValue(const FlagKey& k, const std::string& v) {
  if (v.empty()) return InvalidArgument("is empty");
  switch (k.kind) {
    case FlagKind::kText:
    case FlagKind::kPath:
    case FlagKind::kModel:
    case FlagKind::kFiles:
      return Status::Ok();
    case FlagKind::kShape:
      return ParseInputShapeFlag(v).status();
    case FlagKind::kAddress: {
      ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(v, k.name));
      if (hp.port < 0) return InvalidArgument("'" + v + "' needs a port");
      return Status::Ok();
    }
    case FlagKind::kHost: {
      ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(v, k.name));
      if (hp.port >= 0) {
        return InvalidArgument("'" + v +
                               "' has a port; give a HOST only (each plan "
                               "listens on a port of its own)");
      }
      return Status::Ok();
    }
    case FlagKind::kInteger: {
      int64_t n = 0;
      const char* end = v.data() + v.size();
      auto [p, ec] = std::from_chars(v.data(), end, n);
      if (ec != std::errc() || p != end) {
        return InvalidArgument("'" + v + "' is not a whole number");
      }
      if (k.hi == kFlagIntMax && static_cast<double>(n) > k.hi) {
        return InvalidArgument("'" + v + "' is too large");
      }
      if (!InRange(k, static_cast<double>(n))) {
        return InvalidArgument("'" + v + "' must be " + RangeText(k));
      }
      return Status::Ok();
    }
    case FlagKind::kNumber: {
      double x = 0;
      const char* end = v.data() + v.size();
      auto [p, ec] = std::from_chars(v.data(), end, x);
      if (ec != std::errc() || p != end || !std::isfinite(x)) {
        return InvalidArgument("'" + v + "' is not a number");
      }
      if (!InRange(k, x)) {
        return InvalidArgument("'" + v + "' must be " + RangeText(k));
      }
      return Status::Ok();
    }
    case FlagKind::kBytes: {
      ASSIGN_OR_RETURN(int64_t n, ParseBytes(v));
      if (!InRange(k, static_cast<double>(n))) {
        return InvalidArgument("'" + v + "' must be " + RangeText(k) +
                               " bytes");
      }
      return Status::Ok();
    }
    case FlagKind::kBool:
      if (v != "true" && v != "false") {
        return InvalidArgument("'" + v + "' is not true or false");
      }
      return Status::Ok();
    case FlagKind::kChoice: {
      const std::vector<std::string> words = Words(k.choices);
      if (std::find(words.begin(), words.end(), v) != words.end()) {
        return Status::Ok();
      }
      return InvalidArgument("'" + v + "' is not one of: " + Join(words, " "));
    }
    case FlagKind::kBackend:
      return ParseBackend(v).status();
    case FlagKind::kThreads: {
      const bool digits = std::all_of(
          v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || v.size() > 4) {
        return InvalidArgument("'" + v +
                               "' is not a count of threads (0: one per core)");
      }
      return Status::Ok();
    }
  }
  return Status::Ok();
}

// A model names a file when it has a directory or an ONNX extension; a
// zoo name ("resnet18") is left as it is.
bool NamesFile(const std::string& model) {
  return model.find('/') != std::string::npos ||
         (model.size() > 5 && model.substr(model.size() - 5) == ".onnx");
}

// A kFiles key's map: each known key names a file, made absolute.
Status ReadFiles(const FlagKey& k, const YAML::Node& node,
                 const std::string& where, const std::string& base_dir,
                 FlagSettings* out) {
  const std::vector<std::string> keys = Words(k.choices);
  if (!node.IsMap()) {
    std::vector<std::string> example;
    for (const std::string& w : keys) example.push_back(w + ": FILE");
    return InvalidArgument(where + " must be a map of file names like {" +
                           Join(example, ", ") + "}");
  }
  for (const auto& t : node) {
    const std::string tk = t.first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), tk) == keys.end()) {
      return InvalidArgument(where + " has an unknown key '" + tk +
                             "' (known: " + Join(keys, ", ") + ")");
    }
    if (!t.second.IsScalar() || t.second.as<std::string>().empty()) {
      return InvalidArgument(where + " " + tk + " must be a file name");
    }
    (*out)["--" + std::string(k.name) + "-" + tk] =
        Absolute(t.second.as<std::string>(), base_dir);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<FlagSettings> ParseFlagConfig(const FlagConfigSpec& spec,
                                       const std::string& text,
                                       const std::string& origin,
                                       const std::string& base_dir) {
  FlagSettings out;
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return out;  // an empty file: every default
    if (!root.IsMap()) {
      return InvalidArgument(origin + ": must be a map of settings like '" +
                             spec.example + "' (keys: " + KnownKeys(spec) +
                             ")");
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const std::string where = origin + ": " + key;
      const auto k =
          std::find_if(spec.keys.begin(), spec.keys.end(),
                       [&](const FlagKey& x) { return key == x.name; });
      if (k == spec.keys.end()) {
        return InvalidArgument(origin + ": unknown key '" + key +
                               "' (known: " + KnownKeys(spec) + ")");
      }
      if (k->kind == FlagKind::kFiles) {
        RETURN_IF_ERROR(ReadFiles(*k, kv.second, where, base_dir, &out));
        continue;
      }
      if (!kv.second.IsScalar()) {
        return InvalidArgument(where + " must be a single value, not " +
                               (kv.second.IsMap()        ? "a map"
                                : kv.second.IsSequence() ? "a list"
                                                         : "empty"));
      }
      const std::string v = kv.second.as<std::string>();
      if (Status s = CheckValue(*k, v); !s.ok()) return s.WithContext(where);
      const bool path = k->kind == FlagKind::kPath ||
                        (k->kind == FlagKind::kModel && NamesFile(v));
      out[std::string("--") + key] = path ? Absolute(v, base_dir) : v;
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": " + e.what());
  }
  return out;
}

StatusOr<FlagSettings> LoadFlagConfig(const FlagConfigSpec& spec,
                                      const std::string& path) {
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
    return InvalidArgument("--config " + path + ": larger than 1 MiB; " +
                           spec.owner + " is a few lines of YAML");
  }
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return ParseFlagConfig(spec, text, path, abs.parent_path().string());
}

}  // namespace shoal
