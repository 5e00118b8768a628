// One request's spans as a picture: a Gantt chart in SVG, one row per
// device with its compute lane (each task run; a thin line from its last
// input to its start is the time it waited for the device) and its send
// lane (each message, from a sender taking it to its delivery). `shoal
// bench --timeline` draws what was measured, `shoal simulate --timeline`
// what is predicted, on the same scale, so the two can be put side by side;
// given the same time axis (`axis_s`, --timeline-ms), a millisecond is at
// the same place in both, so their lengths compare at a glance.
#ifndef SHOAL_PLAN_TIMELINE_SVG_H_
#define SHOAL_PLAN_TIMELINE_SVG_H_

#include <string>
#include <vector>

#include "plan/plan.h"
#include "plan/trace.h"
#include "util/status.h"

namespace shoal {

// The request drawn: of those with a request span, the one of median
// latency; without any, the highest request number among the spans; -1
// when there are no spans.
int64_t TimelineRequest(const std::vector<TraceSpan>& spans);

// The SVG document for request `seq` (TimelineRequest's choice when -1),
// titled `title`. Its time axis runs from the request's start to
// `axis_s` seconds, or to its end where that is later (0: to its end).
std::string TimelineSvg(const Plan& p, const std::vector<TraceSpan>& spans,
                        const std::string& title, int64_t seq = -1,
                        double axis_s = 0);
// Writes it to `path`; an error naming the file when it cannot, or when
// there is no span to draw.
Status WriteTimelineSvg(const std::string& path, const Plan& p,
                        const std::vector<TraceSpan>& spans,
                        const std::string& title, double axis_s = 0);

}  // namespace shoal

#endif  // SHOAL_PLAN_TIMELINE_SVG_H_
