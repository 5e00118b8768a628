// The dashboard's files are compiled in and reachable, the page loads only
// what the server has, and /api/status describes the plan: every task on
// its devices and the bytes of every link, as the plan's own count says.
#include "serve/dashboard.h"

#include <gtest/gtest.h>

#include <regex>

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
       it != end; ++it, ++refs) {
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

}  // namespace
}  // namespace shoal
