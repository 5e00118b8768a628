// A command's config file: a YAML map whose keys are the command's flags
// without their dashes (`shoal worker --config`, `shoal serve --config`),
// so a setting reads the same in both places and a flag on the command
// line overrides the file. Each command lists its keys and what each
// takes; this reads the file and checks every value before the command
// sees it, naming the file and the key at fault.
#ifndef SHOAL_CLI_FLAG_CONFIG_H_
#define SHOAL_CLI_FLAG_CONFIG_H_

#include <limits>
#include <map>
#include <span>
#include <string>

#include "util/status.h"

namespace shoal {

// What a key's value must be.
enum class FlagKind {
  kText,     // anything not empty (checked where it is used)
  kPath,     // made absolute against the file's directory
  kModel,    // a zoo name, or a path when it names a file
  kShape,    // as --input-shape takes it
  kAddress,  // HOST:PORT
  kHost,     // HOST, no port
  kInteger,  // whole, in [lo, hi]
  kNumber,   // real, above lo (lo_open) or from it, below hi (hi_open) or to
  kBytes,    // a size, in [lo, hi] bytes
  kBool,     // true or false
  kChoice,   // one of `choices`
  kBackend,  // an engine backend's name
  kThreads,  // a count of threads, 0 for one per core
  kFiles,    // a map of file names keyed by `choices`: each is --NAME-KEY
};

struct FlagKey {
  const char* name;
  FlagKind kind;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false, hi_open = false;
  const char* choices = nullptr;  // kChoice, kFiles: words separated by '|'
};

// The largest value of an int flag: its bound, but not a limit a person
// means, so a range up to it reads "at least LO".
inline constexpr double kFlagIntMax = std::numeric_limits<int32_t>::max();

struct FlagConfigSpec {
  const char* owner;    // "a worker's config": what a few lines are of
  const char* example;  // "listen: 0.0.0.0:7000": one line of a good file
  std::span<const FlagKey> keys;
};

// Flag ("--listen", "--tls-ca", ...) -> its value as text, checked.
using FlagSettings = std::map<std::string, std::string>;

// `text` is the file's content, `origin` its name in errors, `base_dir`
// where relative paths in it start. An empty file is every default.
StatusOr<FlagSettings> ParseFlagConfig(const FlagConfigSpec& spec,
                                       const std::string& text,
                                       const std::string& origin,
                                       const std::string& base_dir);
// Reads `path` (refusing one over 1 MiB: a binary named by accident) and
// parses it, relative paths against its directory.
StatusOr<FlagSettings> LoadFlagConfig(const FlagConfigSpec& spec,
                                      const std::string& path);

}  // namespace shoal

#endif  // SHOAL_CLI_FLAG_CONFIG_H_
