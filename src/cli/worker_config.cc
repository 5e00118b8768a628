#include "cli/worker_config.h"

#include "cli/flag_config.h"

namespace shoal {
namespace {

// The settings of a device; the emulation flags (--cpu-fraction,
// --link-*) stay on the command line, where `cluster up` gives them.
constexpr FlagKey kKeys[] = {
    {"listen", FlagKind::kAddress},
    {"name", FlagKind::kText},
    {"memory", FlagKind::kBytes},
    {"threads", FlagKind::kThreads},
    {"backend", FlagKind::kBackend},
    {"cache-dir", FlagKind::kPath},
    {"cache-size", FlagKind::kBytes},
    {"max-message", FlagKind::kBytes},
    {"metrics", FlagKind::kAddress},
    {"announce", FlagKind::kBool},
    {"tls", FlagKind::kFiles, 0, 0, false, false, "ca|cert|key"},
};

constexpr FlagConfigSpec kSpec{"a worker's config", "listen: 0.0.0.0:7000",
                               kKeys};

}  // namespace

StatusOr<WorkerSettings> ParseWorkerConfig(const std::string& text,
                                           const std::string& origin,
                                           const std::string& base_dir) {
  return ParseFlagConfig(kSpec, text, origin, base_dir);
}

StatusOr<WorkerSettings> LoadWorkerConfig(const std::string& path) {
  return LoadFlagConfig(kSpec, path);
}

}  // namespace shoal
