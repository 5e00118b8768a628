// JSON from outside the process (plan files, a Deploy's plan, a Profile's
// graph, profiles) parsed with a bound on nesting. nlohmann's parser keeps
// its own stack, but what walks the value afterwards (dump() in an error
// message, copies, comparisons) recurses once per level: a plan nested
// 100 000 deep, 200 KB of brackets, overflowed the stack of `run --local`
// and killed a worker it was sent to. Plans and graphs nest six levels.
#ifndef SHOAL_PLAN_JSON_PARSE_H_
#define SHOAL_PLAN_JSON_PARSE_H_

#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace shoal {

constexpr int kMaxJsonDepth = 64;

// `text` as JSON, or an error naming `what` (a nesting deeper than
// kMaxJsonDepth is refused before it is built).
StatusOr<nlohmann::json> ParseJson(std::string_view text,
                                   const std::string& what);
StatusOr<nlohmann::json> ParseJson(std::istream& in, const std::string& what);

// A value for an error message: scalars as they are (strings cut to 40
// characters), arrays and objects by their kind and size, never a dump of
// untrusted structure.
std::string JsonBrief(const nlohmann::json& j);

}  // namespace shoal

#endif  // SHOAL_PLAN_JSON_PARSE_H_
