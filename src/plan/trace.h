// Where a request's time goes, span by span: what the workers record for
// `shoal bench --trace` and what the simulator predicts for `shoal simulate
// --trace`, in one form, written as Chrome trace-event JSON (Perfetto,
// chrome://tracing) so that a measured run and its prediction can be
// opened side by side (docs/cli.md, "Traces").
#ifndef SHOAL_PLAN_TRACE_H_
#define SHOAL_PLAN_TRACE_H_

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "plan/plan.h"
#include "util/status.h"

namespace shoal {

struct TraceSpan {
  enum class Kind { kRequest, kTask, kSend };
  Kind kind = Kind::kTask;
  int device = -1;  // plan device; -1: the coordinator (a request)
  int64_t seq = 0;  // the request's number
  int item = -1;    // kTask: task id; kSend: transfer index
  // Seconds on one clock. A request: sent, -, answered. A task: its last
  // input in, compute started, done. A message: queued for a sender, taken
  // by one, delivered (measured: the receiver's acknowledgement; simulated:
  // its arrival).
  double ready_s = 0, start_s = 0, end_s = 0;
};

// The steady clock as spans (seconds) and the wire (ns) carry it.
int64_t SteadyNs(
    std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now());
inline double SteadySeconds() { return SteadyNs() * 1e-9; }

// One process per plan device (its compute and send lanes) and one for the
// coordinator's requests; times from the earliest span, in microseconds.
nlohmann::json ChromeTrace(const Plan& p, const std::vector<TraceSpan>& spans);
Status WriteTrace(const std::string& path, const Plan& p,
                  const std::vector<TraceSpan>& spans);

}  // namespace shoal

#endif  // SHOAL_PLAN_TRACE_H_
