// The dashboard of `shoal serve --dashboard ADDR` (docs/serve.md): a page
// (src/serve/dashboard/, compiled in with Chart.js) that polls
// GET /api/status, the JSON made here, and draws the cluster, the plan,
// per-device utilisation and queues, the latency histogram and history,
// and the re-plans with their reasons.
#ifndef SHOAL_SERVE_DASHBOARD_H_
#define SHOAL_SERVE_DASHBOARD_H_

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "metrics/http_server.h"
#include "plan/plan.h"
#include "serve/latency_history.h"
#include "shoal.pb.h"

namespace shoal {

// What the page draws of a plan: its devices, each task with the devices
// running it and the layer it computes, and the bytes each directed link
// carries per request (plan/plan_cost.h, TrafficPerLink).
nlohmann::json PlanPictureJson(const Plan& plan);

struct DashboardState {
  rpc::ServeStatusReply status;
  const Plan* plan = nullptr;  // the current generation's; null: none
  // (upper bound in seconds, cumulative count); the last bound +Inf.
  std::vector<std::pair<double, uint64_t>> latency_buckets;
  std::vector<LatencyHistory::Point> history;
  double uptime_s = 0;
  // The latest re-plans not made and requests failed, each a JSON object
  // with its reason (serve/recent_events.h); arrays, oldest first.
  nlohmann::json replans_not_made = nlohmann::json::array();
  nlohmann::json request_errors = nlohmann::json::array();
};

// GET /api/status: StatusJson plus "plan", "latency", "uptime_s",
// "replans_not_made" and "request_errors".
nlohmann::json DashboardJson(const DashboardState& s);

// The routes of the dashboard's server: "/" and every embedded file by
// name, and "/api/status" answering with `status()`.
std::map<std::string, HttpHandler> DashboardRoutes(
    std::function<nlohmann::json()> status);

}  // namespace shoal

#endif  // SHOAL_SERVE_DASHBOARD_H_
