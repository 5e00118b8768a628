// libFuzzer target: bytes -> plan JSON -> Plan -> VerifyPlan, what a worker's
// Deploy does with a plan it is sent (docs/testing.md).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan_json.h"
#include "plan/plan_verify.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr,
                                           /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  auto p = shoal::PlanFromJson(j);
  if (!p.ok()) return 0;
  (void)shoal::VerifyPlan(*p);
  return 0;
}
