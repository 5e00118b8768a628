#include "cli/serve_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "cli/commands.h"
#include "cluster/cluster.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

enum class Kind {
  kText,     // checked where it is used (a strategy's name)
  kPath,     // made absolute against the file's directory
  kModel,    // a zoo name, or a path when it names a file
  kShape,    // as --input-shape takes it
  kAddress,  // HOST:PORT
  kHost,     // HOST, no port
  kInteger,  // whole, in [lo, hi]
  kNumber,   // real, above lo (lo_open) or from it, below hi (hi_open) or to
  kBytes,    // a size, in [lo, hi] bytes
  kBool,
  kChoice,  // one of `choices`
};

struct Key {
  const char* name;
  Kind kind;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  const char* choices = nullptr;  // kChoice: words separated by '|'
};

constexpr double kInf = std::numeric_limits<double>::infinity();
// The largest value of an int flag: its bound, but not a limit a person
// means, so a range up to it reads "at least LO".
constexpr double kIntMax = std::numeric_limits<int32_t>::max();

// serve's flags, in --help's order, with the ranges RunServe checks.
const Key kKeys[] = {
    {"cluster", Kind::kPath},
    {"model", Kind::kModel},
    {"input-shape", Kind::kShape},
    {"weights-seed", Kind::kInteger, 0, 9007199254740992.0},
    {"listen", Kind::kAddress},
    {"advertise", Kind::kHost},
    {"strategy", Kind::kText},
    {"objective", Kind::kChoice, 0, 0, false, false, "latency|throughput"},
    {"concurrency", Kind::kInteger, 0, kIntMax},
    {"time-limit", Kind::kNumber, 0, kInf, true},
    {"monitor-interval", Kind::kNumber, 0, kInf, true},
    {"window", Kind::kInteger, 1, kIntMax},
    {"min-samples", Kind::kInteger, 0, kIntMax},
    {"imbalance", Kind::kNumber, 1, kInf, true},
    {"min-gain", Kind::kNumber, 0, 1, false, true},
    {"cooldown", Kind::kNumber, 0, kInf},
    {"watch", Kind::kNumber, 0, kInf},
    {"timeout-ms", Kind::kInteger, 1, kIntMax},
    {"max-in-flight", Kind::kInteger, 1, kIntMax},
    {"max-message", Kind::kBytes, 1, kInf},
    {"log-every", Kind::kNumber, 0, kInf},
    {"log-format", Kind::kChoice, 0, 0, false, false, "text|json"},
    {"metrics", Kind::kAddress},
    {"dashboard", Kind::kAddress},
    {"http", Kind::kAddress},
    {"http-max-body", Kind::kBytes, 1024, double(int64_t{1} << 30)},
    {"http-token-file", Kind::kPath},
    {"no-rebalance", Kind::kBool},
};

std::string KnownKeys() {
  std::string s;
  for (const Key& k : kKeys) s += std::string(s.empty() ? "" : ", ") + k.name;
  return s;
}

std::string Absolute(const std::string& path, const std::string& base_dir) {
  if (path.empty() || path[0] == '/') return path;
  return (fs::path(base_dir) / path).lexically_normal().string();
}

// "in [1, 10)", "above 1", "at least 0": the range as a person reads it.
std::string RangeText(const Key& k) {
  auto num = [](double v) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.15g", v);
    return std::string(b);
  };
  if (std::isinf(k.hi) || k.hi == kIntMax) {
    return (k.lo_open ? "above " : "at least ") + num(k.lo);
  }
  return "in " + std::string(k.lo_open ? "(" : "[") + num(k.lo) + ", " +
         num(k.hi) + (k.hi_open ? ")" : "]");
}

bool InRange(const Key& k, double v) {
  return (k.lo_open ? v > k.lo : v >= k.lo) &&
         (k.hi_open ? v < k.hi : v <= k.hi);
}

Status CheckValue(const Key& k, const std::string& v) {
  if (v.empty()) return InvalidArgument("is empty");
  switch (k.kind) {
    case Kind::kText:
    case Kind::kPath:
    case Kind::kModel:
      return Status::Ok();
    case Kind::kShape:
      return ParseInputShapeFlag(v).status();
    case Kind::kAddress: {
      ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(v, k.name));
      if (hp.port < 0) return InvalidArgument("'" + v + "' needs a port");
      return Status::Ok();
    }
    case Kind::kHost: {
      ASSIGN_OR_RETURN(HostPort hp, SplitHostPort(v, k.name));
      if (hp.port >= 0) {
        return InvalidArgument("'" + v +
                               "' has a port; give a HOST only (each plan "
                               "listens on a port of its own)");
      }
      return Status::Ok();
    }
    case Kind::kInteger: {
      int64_t n = 0;
      const char* end = v.data() + v.size();
      auto [p, ec] = std::from_chars(v.data(), end, n);
      if (ec != std::errc() || p != end) {
        return InvalidArgument("'" + v + "' is not a whole number");
      }
      if (k.hi == kIntMax && static_cast<double>(n) > k.hi) {
        return InvalidArgument("'" + v + "' is too large");
      }
      if (!InRange(k, static_cast<double>(n))) {
        return InvalidArgument("'" + v + "' must be " + RangeText(k));
      }
      return Status::Ok();
    }
    case Kind::kNumber: {
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
    case Kind::kBytes: {
      ASSIGN_OR_RETURN(int64_t n, ParseBytes(v));
      if (!InRange(k, static_cast<double>(n))) {
        return InvalidArgument("'" + v + "' must be " + RangeText(k) +
                               " bytes");
      }
      return Status::Ok();
    }
    case Kind::kBool:
      if (v != "true" && v != "false") {
        return InvalidArgument("'" + v + "' is not true or false");
      }
      return Status::Ok();
    case Kind::kChoice: {
      const std::string choices = k.choices;
      size_t start = 0;
      while (start <= choices.size()) {
        const size_t bar = std::min(choices.find('|', start), choices.size());
        if (choices.substr(start, bar - start) == v) return Status::Ok();
        start = bar + 1;
      }
      std::string words = choices;
      std::replace(words.begin(), words.end(), '|', ' ');
      return InvalidArgument("'" + v + "' is not one of: " + words);
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

}  // namespace

std::vector<std::string> ServeConfigKeys() {
  std::vector<std::string> out;
  for (const Key& k : kKeys) out.push_back(k.name);
  return out;
}

StatusOr<ServeSettings> ParseServeConfig(const std::string& text,
                                         const std::string& origin,
                                         const std::string& base_dir) {
  ServeSettings out;
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return out;  // an empty file: every default
    if (!root.IsMap()) {
      return InvalidArgument(origin +
                             ": must be a map of settings like 'cluster: "
                             "cluster.yaml' (keys: " +
                             KnownKeys() + ")");
    }
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      const std::string where = origin + ": " + key;
      const Key* k = std::find_if(std::begin(kKeys), std::end(kKeys),
                                  [&](const Key& x) { return key == x.name; });
      if (k == std::end(kKeys)) {
        return InvalidArgument(origin + ": unknown key '" + key +
                               "' (known: " + KnownKeys() + ")");
      }
      if (!kv.second.IsScalar()) {
        return InvalidArgument(where + " must be a single value, not " +
                               (kv.second.IsMap()        ? "a map"
                                : kv.second.IsSequence() ? "a list"
                                                         : "empty"));
      }
      const std::string v = kv.second.as<std::string>();
      if (Status s = CheckValue(*k, v); !s.ok()) return s.WithContext(where);
      const bool path =
          k->kind == Kind::kPath || (k->kind == Kind::kModel && NamesFile(v));
      out[std::string("--") + key] = path ? Absolute(v, base_dir) : v;
    }
  } catch (const YAML::Exception& e) {
    return InvalidArgument(origin + ": " + e.what());
  }
  return out;
}

StatusOr<ServeSettings> LoadServeConfig(const std::string& path) {
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
                           ": larger than 1 MiB; serve's config is a few "
                           "lines of YAML");
  }
  std::error_code ec;
  const fs::path abs = fs::absolute(path, ec);
  return ParseServeConfig(text, path, abs.parent_path().string());
}

}  // namespace shoal
