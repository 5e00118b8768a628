// libFuzzer target: bytes -> plan JSON -> Plan -> VerifyPlan, what a worker's
// Deploy does with a plan it is sent (docs/testing.md).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "plan/json_parse.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = shoal::ParseJson(
      std::string_view(reinterpret_cast<const char*>(data), size), "plan");
  if (!j.ok()) return 0;
  auto p = shoal::PlanFromJson(*j);
  if (!p.ok()) return 0;
  (void)shoal::VerifyPlan(*p);
  return 0;
}
