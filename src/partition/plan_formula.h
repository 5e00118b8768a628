// The fully-distributed paper's communication formula (eqs. 7-10) for a
// Plan whose split layers all use its schemes (lop, lip, fuse1, fuse2, and
// channel/filter, which move data like lop/lip in shoal's execution model).
// Tests and `shoal cost` check it against the Plan's counted transfers.
#ifndef SHOAL_PARTITION_PLAN_FORMULA_H_
#define SHOAL_PARTITION_PLAN_FORMULA_H_

#include "graph/graph.h"
#include "plan/plan.h"

namespace shoal {

// Elements per inference, or an error saying why the formula does not apply.
StatusOr<int64_t> FormulaCommunication(const Plan& p, const Graph& model);

}  // namespace shoal

#endif  // SHOAL_PARTITION_PLAN_FORMULA_H_
