#include "plan/json_parse.h"

#include <stdexcept>

namespace shoal {
namespace {

struct TooDeep : std::runtime_error {
  TooDeep() : std::runtime_error("too deep") {}
};

template <typename Input>
StatusOr<nlohmann::json> Parse(Input&& in, const std::string& what) {
  // The callback sees each value's depth as it starts: throwing there stops
  // the parse before the level is built.
  const nlohmann::json::parser_callback_t bound =
      [](int depth, nlohmann::json::parse_event_t event, nlohmann::json&) {
        if (depth > kMaxJsonDepth &&
            (event == nlohmann::json::parse_event_t::object_start ||
             event == nlohmann::json::parse_event_t::array_start))
          throw TooDeep();
        return true;
      };
  try {
    return nlohmann::json::parse(std::forward<Input>(in), bound);
  } catch (const TooDeep&) {
    return InvalidArgument(what + " nests deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(what + " is not valid JSON: " + e.what());
  }
}

}  // namespace

StatusOr<nlohmann::json> ParseJson(std::string_view text,
                                   const std::string& what) {
  return Parse(text, what);
}

StatusOr<nlohmann::json> ParseJson(std::istream& in, const std::string& what) {
  return Parse(in, what);
}

std::string JsonBrief(const nlohmann::json& j) {
  if (j.is_object())
    return "an object of " + std::to_string(j.size()) + " keys";
  if (j.is_array()) return "an array of " + std::to_string(j.size());
  if (j.is_string()) {
    const std::string& s = j.get_ref<const std::string&>();
    return s.size() <= 40 ? nlohmann::json(s).dump()
                          : nlohmann::json(s.substr(0, 40)).dump() + "...";
  }
  return j.dump();  // a number, a boolean, null: no recursion
}

}  // namespace shoal
