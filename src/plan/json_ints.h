// Integers read from plan and graph JSON. nlohmann's get<int>() takes a
// float too (1e90) and converts it with a cast that is undefined out of the
// type's range (UBSan found it in a fuzzed plan); these take integers only,
// within the type's range, and throw json exceptions otherwise, like get().
#ifndef SHOAL_PLAN_JSON_INTS_H_
#define SHOAL_PLAN_JSON_INTS_H_

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "plan/json_parse.h"

namespace shoal {

template <typename T>
T JsonInt(const nlohmann::json& j) {
  using json = nlohmann::json;
  if (!j.is_number_integer()) {
    throw json::type_error::create(
        302, "expected an integer, got " + JsonBrief(j), &j);
  }
  const bool in_range = j.is_number_unsigned()
                            ? std::in_range<T>(j.get<uint64_t>())
                            : std::in_range<T>(j.get<int64_t>());
  if (!in_range) {
    throw json::out_of_range::create(
        406, "integer " + JsonBrief(j) + " is out of range", &j);
  }
  return j.is_number_unsigned() ? static_cast<T>(j.get<uint64_t>())
                                : static_cast<T>(j.get<int64_t>());
}

// j[key] if present, else `fallback`.
template <typename T>
T JsonIntOr(const nlohmann::json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  return it == j.end() ? fallback : JsonInt<T>(*it);
}

template <typename T>
std::vector<T> JsonInts(const nlohmann::json& j) {
  if (!j.is_array()) {
    throw nlohmann::json::type_error::create(
        302, "expected an array of integers, got " + JsonBrief(j), &j);
  }
  std::vector<T> out;
  out.reserve(j.size());
  for (const auto& v : j) out.push_back(JsonInt<T>(v));
  return out;
}

}  // namespace shoal

#endif  // SHOAL_PLAN_JSON_INTS_H_
