#include "serve/dashboard.h"

#include <cmath>
#include <map>

#include "graph/shape.h"
#include "plan/plan_cost.h"
#include "serve/dashboard_assets.h"
#include "serve/status_json.h"

namespace shoal {

namespace {

std::string ContentType(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() &&
           name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace

nlohmann::json PlanPictureJson(const Plan& plan) {
  nlohmann::json j;
  j["devices"] = nlohmann::json::array();
  for (const auto& d : plan.devices) j["devices"].push_back(d.name);
  j["input_device"] = plan.input_device;
  j["output_device"] = plan.output_device;
  // A layer split over devices (spatial, lop, ...) is several tasks of
  // the same layer and scheme: each is told its part (1-based, in plan
  // order) and how many there are, so that the picture can tell apart
  // boxes that would otherwise list the same names.
  std::map<std::pair<std::string, std::string>, int> parts;
  for (const auto& t : plan.tasks) {
    if (!t.layer.empty()) parts[{t.layer, t.scheme}]++;
  }
  std::map<std::pair<std::string, std::string>, int> seen;
  j["tasks"] = nlohmann::json::array();
  for (const auto& t : plan.tasks) {
    // The layers it computes: its fragment's nodes (a pipeline stage holds
    // many), the first kMaxLayers of them; "nodes" says how many in all.
    constexpr size_t kMaxLayers = 64;
    std::vector<std::string> layers;
    for (const auto& n : t.fragment.nodes) {
      if (layers.size() == kMaxLayers) break;
      layers.push_back(n.name);
    }
    j["tasks"].push_back({{"name", t.name},
                          {"layer", t.layer},
                          {"scheme", t.scheme},
                          {"devices", t.Replicas()},
                          {"layers", layers},
                          {"nodes", t.fragment.nodes.size()}});
    auto& task = j["tasks"].back();
    const auto key = std::make_pair(t.layer, t.scheme);
    task["parts"] = t.layer.empty() ? 1 : parts[key];
    task["part"] = t.layer.empty() ? 1 : ++seen[key];
    // Its first output's shape: where parts differ (a spatial part's
    // rows, a lop part's channels), this shows by how much.
    if (!t.fragment.outputs.empty()) {
      auto it = t.fragment.tensors.find(t.fragment.outputs[0]);
      if (it != t.fragment.tensors.end()) {
        task["output_shape"] = ShapeToString(it->second.shape);
      }
    }
  }
  j["links"] = nlohmann::json::array();
  for (const auto& l : TrafficPerLink(plan)) {
    j["links"].push_back({{"from", l.from},
                          {"to", l.to},
                          {"bytes", l.bytes},
                          {"transfers", l.transfers}});
  }
  return j;
}

nlohmann::json DashboardJson(const DashboardState& s) {
  nlohmann::json j = StatusJson(s.status);
  j["uptime_s"] = s.uptime_s;
  j["plan"] = s.plan != nullptr ? PlanPictureJson(*s.plan) : nlohmann::json();
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& [le, count] : s.latency_buckets) {
    // JSON has no infinity: the last bucket's bound is null.
    buckets.push_back(
        {{"le_s", std::isinf(le) ? nlohmann::json() : nlohmann::json(le)},
         {"count", count}});
  }
  nlohmann::json history = nlohmann::json::array();
  for (const auto& p : s.history) {
    history.push_back({{"unix_s", p.unix_s},
                       {"count", p.count},
                       {"p50_ms", p.p50_ms},
                       {"p95_ms", p.p95_ms},
                       {"max_ms", p.max_ms}});
  }
  j["latency"] = {{"buckets", buckets}, {"history", history}};
  j["replans_not_made"] = s.replans_not_made;
  j["request_errors"] = s.request_errors;
  return j;
}

std::map<std::string, HttpHandler> DashboardRoutes(
    std::function<nlohmann::json()> status) {
  std::map<std::string, HttpHandler> routes;
  for (const EmbeddedFile& f : DashboardAssets()) {
    HttpHandler h = [f] {
      HttpReply r;
      r.content_type = ContentType(f.name);
      r.body = std::string(f.data);
      return r;
    };
    routes["/" + std::string(f.name)] = h;
    if (f.name == "index.html") routes["/"] = h;
  }
  routes["/api/status"] = [status] {
    HttpReply r;
    r.content_type = "application/json";
    r.body =
        status().dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return r;
  };
  return routes;
}

}  // namespace shoal
