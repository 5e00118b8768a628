// A Plan for people: a table of tasks and transfers, and Graphviz.
#ifndef SHOAL_PLAN_PLAN_PRINT_H_
#define SHOAL_PLAN_PLAN_PRINT_H_

#include <optional>
#include <ostream>
#include <string>

#include "plan/plan.h"

namespace shoal {

// Every task, each device's bytes, each layer's reason and, for auto, every
// candidate: what `shoal plan --verbose` prints.
void PrintPlanTable(const Plan& p, std::ostream& os);

// What `shoal plan` prints by default: the choice and its prediction, a
// line per device, and the few reasons that decided it (auto's nearest
// rivals among its candidates), in about 20 lines whatever the model's
// size, so that the answer is not buried under the details.
struct PlanSummaryOptions {
  // Where the devices came from: "examples/pi3-4.yaml (4 devices)".
  std::string cluster;
  // A prediction of a plan made by one strategy (auto's is in the plan).
  std::optional<PlanPrediction> prediction;
};
void PrintPlanSummary(const Plan& p, const PlanSummaryOptions& o,
                      std::ostream& os);
// What auto predicted and the alternatives it beat (part of the table).
void PrintPrediction(const PlanPrediction& pr, std::ostream& os);
// Tasks as boxes coloured by device, transfers as edges labelled with bytes.
void WritePlanDot(const Plan& p, std::ostream& os);

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_PRINT_H_
