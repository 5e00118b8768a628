#include "cli/serve_config.h"

#include <limits>

#include "cli/flag_config.h"

namespace shoal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// serve's flags, in --help's order, with the ranges RunServe checks.
constexpr FlagKey kKeys[] = {
    {"cluster", FlagKind::kPath},
    {"model", FlagKind::kModel},
    {"input-shape", FlagKind::kShape},
    {"weights-seed", FlagKind::kInteger, 0, 9007199254740992.0},
    {"listen", FlagKind::kAddress},
    {"advertise", FlagKind::kHost},
    {"strategy", FlagKind::kText},
    {"objective", FlagKind::kChoice, 0, 0, false, false, "latency|throughput"},
    {"concurrency", FlagKind::kInteger, 0, kFlagIntMax},
    {"time-limit", FlagKind::kNumber, 0, kInf, true},
    {"monitor-interval", FlagKind::kNumber, 0, kInf, true},
    {"window", FlagKind::kInteger, 1, kFlagIntMax},
    {"min-samples", FlagKind::kInteger, 0, kFlagIntMax},
    {"imbalance", FlagKind::kNumber, 1, kInf, true},
    {"min-gain", FlagKind::kNumber, 0, 1, false, true},
    {"cooldown", FlagKind::kNumber, 0, kInf},
    {"watch", FlagKind::kNumber, 0, kInf},
    {"discover", FlagKind::kNumber, 0, 3600},
    {"timeout-ms", FlagKind::kInteger, 1, kFlagIntMax},
    {"max-in-flight", FlagKind::kInteger, 1, kFlagIntMax},
    {"max-message", FlagKind::kBytes, 1, kInf},
    {"log-every", FlagKind::kNumber, 0, kInf},
    {"log-format", FlagKind::kChoice, 0, 0, false, false, "text|json"},
    {"metrics", FlagKind::kAddress},
    {"dashboard", FlagKind::kAddress},
    {"http", FlagKind::kAddress},
    {"http-max-body", FlagKind::kBytes, 1024, double(int64_t{1} << 30)},
    {"http-token-file", FlagKind::kPath},
    {"no-rebalance", FlagKind::kBool},
};

constexpr FlagConfigSpec kSpec{"serve's config", "cluster: cluster.yaml",
                               kKeys};

}  // namespace

std::vector<std::string> ServeConfigKeys() {
  std::vector<std::string> out;
  for (const FlagKey& k : kKeys) out.push_back(k.name);
  return out;
}

StatusOr<ServeSettings> ParseServeConfig(const std::string& text,
                                         const std::string& origin,
                                         const std::string& base_dir) {
  return ParseFlagConfig(kSpec, text, origin, base_dir);
}

StatusOr<ServeSettings> LoadServeConfig(const std::string& path) {
  return LoadFlagConfig(kSpec, path);
}

}  // namespace shoal
