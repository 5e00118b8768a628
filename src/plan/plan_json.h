// Plan <-> JSON. The format is documented in docs/plan-format.md; a file of
// another version is refused, naming both versions.
#ifndef SHOAL_PLAN_PLAN_JSON_H_
#define SHOAL_PLAN_PLAN_JSON_H_

#include <nlohmann/json.hpp>
#include <string>

#include "plan/plan.h"

namespace shoal {

nlohmann::json PlanToJson(const Plan& p);
StatusOr<Plan> PlanFromJson(const nlohmann::json& j);

Status SavePlan(const Plan& p, const std::string& path);
// Reads, parses and verifies (plan/plan_verify.h) a plan file.
StatusOr<Plan> LoadPlan(const std::string& path);

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_JSON_H_
