// A Plan for people: a table of tasks and transfers, and Graphviz.
#ifndef SHOAL_PLAN_PLAN_PRINT_H_
#define SHOAL_PLAN_PLAN_PRINT_H_

#include <ostream>

#include "plan/plan.h"

namespace shoal {

void PrintPlanTable(const Plan& p, std::ostream& os);
// What auto predicted and the alternatives it beat (part of the table).
void PrintPrediction(const PlanPrediction& pr, std::ostream& os);
// Tasks as boxes coloured by device, transfers as edges labelled with bytes.
void WritePlanDot(const Plan& p, std::ostream& os);

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_PRINT_H_
