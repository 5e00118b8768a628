#include "partition/scheme.h"

#include <array>
#include <utility>

namespace shoal {
namespace {

constexpr std::array<std::pair<Scheme, const char*>, 9> kNames = {{
    {Scheme::kWhole, "whole"},
    {Scheme::kLop, "lop"},
    {Scheme::kLip, "lip"},
    {Scheme::kFuse1, "fuse1"},
    {Scheme::kFuse2, "fuse2"},
    {Scheme::kChannel, "channel"},
    {Scheme::kFilter, "filter"},
    {Scheme::kSpatial, "spatial"},
    {Scheme::kPipeline, "pipeline"},
}};

}  // namespace

const char* SchemeName(Scheme scheme) {
  for (const auto& [s, name] : kNames) {
    if (s == scheme) return name;
  }
  return "unknown";  // unreachable for a valid enumerator
}

StatusOr<Scheme> ParseScheme(const std::string& name) {
  std::string valid;
  for (const auto& [s, n] : kNames) {
    if (name == n) return s;
    valid += valid.empty() ? "" : ", ";
    valid += n;
  }
  return InvalidArgument("unknown scheme '" + name + "' (valid: " + valid +
                         ")");
}

}  // namespace shoal
