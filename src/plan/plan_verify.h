// Checks a Plan before anything runs it: every transfer names real tasks and
// tensors, regions fit, every task input is covered exactly (copy) or at
// least once (sum), and tasks only wait on earlier tasks, so running each
// device's tasks in id order can never deadlock.
#ifndef SHOAL_PLAN_PLAN_VERIFY_H_
#define SHOAL_PLAN_PLAN_VERIFY_H_

#include "graph/graph.h"
#include "plan/plan.h"

namespace shoal {

Status VerifyPlan(const Plan& p);

// The plan's weight slices and input/output fit `model` (a shaped graph).
Status VerifyPlanAgainstModel(const Plan& p, const Graph& model);

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_VERIFY_H_
