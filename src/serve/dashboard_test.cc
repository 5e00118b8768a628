// The dashboard's files are compiled in and reachable, the page loads only
// what the server has, and /api/status describes the plan: every task on
// its devices and the bytes of every link, as the plan's own count says.
#include "serve/dashboard.h"

#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <set>

#include "models/load_model.h"
#include "plan/plan_cost.h"
#include "serve/dashboard_assets.h"
#include "serve/generation.h"

namespace shoal {
namespace {

TEST(Dashboard, ServesItsFilesAndChartJs) {
  auto routes = DashboardRoutes([] { return nlohmann::json{{"ok", true}}; });
  for (const char* path : {"/", "/index.html", "/dashboard.js",
                           "/dashboard.css", "/chart.min.js", "/api/status"}) {
    ASSERT_TRUE(routes.count(path)) << path;
  }
  const HttpReply index = routes["/"]();
  EXPECT_EQ(index.content_type, "text/html; charset=utf-8");
  // Everything the page loads is one of the server's routes: nothing comes
  // from elsewhere.
  const std::regex ref("(?:src|href)=\"([^\"]+)\"");
  int refs = 0;
  for (std::sregex_iterator it(index.body.begin(), index.body.end(), ref), end;
       it != end; ++it) {
    // A link to a place on the page itself ("#errors-section") loads
    // nothing.
    if ((*it)[1].str()[0] == '#') continue;
    ++refs;
    EXPECT_TRUE(routes.count("/" + (*it)[1].str())) << (*it)[1].str();
  }
  EXPECT_GE(refs, 3);
  EXPECT_NE(routes["/chart.min.js"]().body.find("Chart.js v"),
            std::string::npos);
  EXPECT_EQ(routes["/api/status"]().body, "{\"ok\":true}");
  EXPECT_EQ(routes["/api/status"]().content_type, "application/json");
}

TEST(Dashboard, StatusJsonHasThePlanAndLatency) {
  LoadOptions lo;
  auto model = LoadModel("lenet5", lo);
  ASSERT_TRUE(model.ok()) << model.status().message();
  PlanOptions base;
  base.strategy = "pipeline";
  base.model.spec = "lenet5";
  std::vector<DeviceSpec> devs(3);
  for (int i = 0; i < 3; ++i) devs[i].name = "pi" + std::to_string(i);
  auto choice = PlanForDevices(model->graph, base, devs);
  ASSERT_TRUE(choice.ok()) << choice.status().message();

  DashboardState st;
  st.status.set_model("lenet5");
  st.status.set_answered(7);
  auto* d = st.status.add_devices();
  d->set_name("pi0");
  d->set_state("serving");
  d->set_utilisation(0.5);
  d->set_link_bandwidth_bps(62e6);
  st.plan = &choice->plan;
  st.latency_buckets = {
      {0.01, 3}, {0.1, 7}, {std::numeric_limits<double>::infinity(), 7}};
  st.history = {{100, 7, 5, 9, 11}};
  st.uptime_s = 12;
  const nlohmann::json j = DashboardJson(st);
  EXPECT_EQ(j["answered"], 7);
  EXPECT_EQ(j["devices"][0]["utilisation"], 0.5);
  EXPECT_EQ(j["devices"][0]["link_bandwidth_bps"], 62e6);
  EXPECT_TRUE(j["latency"]["buckets"][2]["le_s"].is_null());
  EXPECT_EQ(j["latency"]["buckets"][1]["count"], 7);
  EXPECT_EQ(j["latency"]["history"][0]["p95_ms"], 9);
  const auto& plan = j["plan"];
  ASSERT_EQ(plan["devices"].size(), 3u);
  EXPECT_EQ(plan["devices"][2], "pi2");
  EXPECT_EQ(plan["tasks"].size(), choice->plan.tasks.size());
  std::set<int> used;
  size_t layers = 0;
  for (const auto& t : plan["tasks"]) {
    for (int dv : t["devices"]) used.insert(dv);
    EXPECT_EQ(t["layers"].size(), t["nodes"].get<size_t>());
    layers += t["layers"].size();
  }
  // Every layer of the model is on some device.
  EXPECT_GE(layers, model->graph.nodes.size());
  EXPECT_EQ(used.size(), 3u);  // a pipeline over three uses all three
  int64_t bytes = 0;
  for (const auto& l : plan["links"]) bytes += l["bytes"].get<int64_t>();
  int64_t want = 0;
  for (const auto& l : TrafficPerLink(choice->plan)) want += l.bytes;
  EXPECT_GT(want, 0);
  EXPECT_EQ(bytes, want);
}

// A spatial plan runs the same layers on every device, one strip each:
// each task says which part of how many it is, and its output's shape (its
// rows), so that the picture can tell the boxes apart.
TEST(Dashboard, SpatialPartsAreNumberedWithTheirShapes) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  auto model = LoadModel("lenet5", lo);
  ASSERT_TRUE(model.ok()) << model.status().message();
  PlanOptions base;
  base.strategy = "spatial";
  base.model.spec = "lenet5";
  std::vector<DeviceSpec> devs(3);
  for (int i = 0; i < 3; ++i) devs[i].name = "pi" + std::to_string(i);
  auto choice = PlanForDevices(model->graph, base, devs);
  ASSERT_TRUE(choice.ok()) << choice.status().message();
  const nlohmann::json j = PlanPictureJson(choice->plan);
  std::map<std::pair<std::string, std::string>, std::set<int>> parts;
  std::map<std::pair<std::string, std::string>, std::set<std::string>> shapes;
  for (const auto& t : j["tasks"]) {
    const auto key = std::make_pair(t["layer"].get<std::string>(),
                                    t["scheme"].get<std::string>());
    const int part = t["part"], n = t["parts"];
    EXPECT_GE(part, 1);
    EXPECT_LE(part, n);
    EXPECT_TRUE(parts[key].insert(part).second)
        << key.first << " part " << part << " twice";
    ASSERT_TRUE(t.contains("output_shape")) << t.dump();
    shapes[key].insert(t["output_shape"].get<std::string>());
  }
  int split = 0;
  for (const auto& [key, seen] : parts) {
    // Parts 1..n, each once, n being what every task of the layer says.
    EXPECT_EQ(*seen.rbegin(), static_cast<int>(seen.size())) << key.first;
    if (key.second == "spatial" && seen.size() == 3) {
      ++split;
      EXPECT_GE(shapes[key].size(), 2u)
          << key.first << ": its strips' rows should differ (28 rows in 3)";
    }
  }
  EXPECT_GE(split, 1) << j.dump();
}

TEST(Dashboard, StatusJsonHasWhatWasNotDone) {
  DashboardState st;
  st.replans_not_made.push_back({{"outcome", "declined"},
                                 {"why", "the planner gives the same plan"}});
  st.request_errors.push_back({{"request", 3}, {"error", "deadline"}});
  const nlohmann::json j = DashboardJson(st);
  EXPECT_EQ(j["replans_not_made"][0]["why"], "the planner gives the same plan");
  EXPECT_EQ(j["request_errors"][0]["error"], "deadline");
  // None yet: empty arrays, which the page reads as "none".
  const nlohmann::json empty = DashboardJson(DashboardState{});
  EXPECT_TRUE(empty["replans_not_made"].is_array());
  EXPECT_TRUE(empty["request_errors"].empty());
}

}  // namespace
}  // namespace shoal
