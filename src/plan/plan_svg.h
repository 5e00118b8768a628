// A Plan as a picture: one row per device, one column per step of the
// task graph (a task sits one column right of the latest task it reads
// from), each task a box in the row of every device that runs it, and
// every transfer between two devices an arrow labelled with its bytes
// (thicker for more). Written as SVG directly (`shoal plan --svg`);
// hovering a box or an arrow shows the task, its layer and scheme, or the
// tensor regions and bytes.
#ifndef SHOAL_PLAN_PLAN_SVG_H_
#define SHOAL_PLAN_PLAN_SVG_H_

#include <string>

#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

std::string PlanSvg(const Plan& p, const std::string& title);
// Writes it to `path`; an error naming the file when it cannot.
Status WritePlanSvg(const Plan& p, const std::string& path,
                    const std::string& title);

}  // namespace shoal

#endif  // SHOAL_PLAN_PLAN_SVG_H_
