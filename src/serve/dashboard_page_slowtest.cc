// The dashboard page as headless Chromium draws it (label slow; needs
// Debian's chromium, which scripts/install-deps.sh --with-test-deps
// installs), from a status made here: a spatial plan's boxes name each
// part with its scheme, the devices' queues read as the tasks waiting
// ahead (a mean queue of 1.0 is none), and the re-plans not made and the
// failed requests are listed with their reasons.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <regex>
#include <set>

#include "metrics/http_server.h"
#include "models/load_model.h"
#include "serve/dashboard.h"
#include "serve/generation.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

// Headless Chromium's DOM of `url` after `budget_ms` of virtual time.
std::string DumpDom(const std::string& url, const std::string& profile,
                    int budget_ms) {
  const std::string cmd =
      "timeout 120 /usr/bin/chromium --headless=new --no-sandbox "
      "--disable-gpu --no-first-run --user-data-dir=" +
      profile + " --virtual-time-budget=" + std::to_string(budget_ms) +
      " --dump-dom '" + url + "' 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// The cells of the table row whose first cell is `first`.
std::vector<std::string> RowOf(const std::string& dom,
                               const std::string& first) {
  std::smatch m;
  const std::regex row("<tr><td>" + first + "</td>(.*?)</tr>");
  std::vector<std::string> cells = {first};
  if (!std::regex_search(dom, m, row)) return {};
  const std::string rest = m[1];
  const std::regex cell("<td[^>]*>(.*?)</td>");
  for (std::sregex_iterator it(rest.begin(), rest.end(), cell), end; it != end;
       ++it) {
    cells.push_back((*it)[1]);
  }
  return cells;
}

DeviceSpec Named(const std::string& name) {
  DeviceSpec d;
  d.name = name;
  return d;
}

TEST(DashboardPage, ShowsPartsQueuesAndWhatWasNotDone) {
  if (!fs::exists("/usr/bin/chromium")) {
    GTEST_SKIP() << "needs Debian's chromium (scripts/install-deps.sh "
                    "--with-test-deps)";
  }
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  auto model = LoadModel("lenet5", lo);
  ASSERT_TRUE(model.ok()) << model.status().message();
  PlanOptions base;
  base.strategy = "spatial";
  base.model.spec = "lenet5";
  const std::vector<DeviceSpec> devs = {Named("pi0"), Named("pi1"),
                                        Named("pi2")};
  auto choice = PlanForDevices(model->graph, base, devs);
  ASSERT_TRUE(choice.ok()) << choice.status().message();

  DashboardState st;
  st.status.set_model("lenet5");
  st.status.set_generation(1);
  st.status.set_strategy("spatial");
  st.status.set_answered(9);
  st.status.set_failed(3);
  // pi0's tasks never wait (mean queue 1.0: the task itself), pi1's wait
  // behind 1.5 on average, pi2 ran nothing in the window.
  for (const auto& [name, queue] : std::vector<std::pair<std::string, double>>{
           {"pi0", 1.0}, {"pi1", 2.5}, {"pi2", 0}}) {
    auto* d = st.status.add_devices();
    d->set_name(name);
    d->set_state("serving");
    d->set_share(1);
    d->set_queue_mean(queue);
  }
  st.plan = &choice->plan;
  st.latency_buckets = {{0.1, 9}, {std::numeric_limits<double>::infinity(), 9}};
  st.uptime_s = 30;
  st.replans_not_made.push_back(
      {{"unix_ms", 1795923089000},
       {"outcome", "declined"},
       {"kind", "imbalance"},
       {"reason", "device pi1 is slower than planned"},
       {"why", "it would not gain enough"},
       {"current_ms", 4.0},
       {"new_ms", 3.9}});
  st.replans_not_made.push_back(
      {{"unix_ms", 1795923090000},
       {"outcome", "failed"},
       {"kind", "device_lost"},
       {"reason", "pi2 left"},
       {"why", "deploying the new plan: pi0 is full"}});
  st.request_errors.push_back({{"unix_ms", 1795923091000},
                               {"request", 7},
                               {"client", "camera"},
                               {"error", "deadline exceeded on pi1"}});
  st.request_errors.push_back({{"unix_ms", 1795923092000},
                               {"request", 8},
                               {"client", "camera"},
                               {"error", "input has shape 1x3x8x8"}});
  auto http =
      HttpServer::Start("127.0.0.1:0", "dashboard test",
                        DashboardRoutes([&st] { return DashboardJson(st); }));
  ASSERT_TRUE(http.ok()) << http.status().message();

  const std::string dir = fs::temp_directory_path() /
                          ("shoal-dashboard-page-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string dom = DumpDom(
      "http://127.0.0.1:" + std::to_string((*http)->port()) + "/", dir, 3000);
  fs::remove_all(dir);
  ASSERT_NE(dom.find("id=\"answered\">9<"), std::string::npos)
      << "the page did not draw the status:\n"
      << dom;

  // Queues: what waits ahead, not the mean that counts the task itself.
  EXPECT_NE(dom.find("waiting ahead</th>"), std::string::npos);
  ASSERT_EQ(RowOf(dom, "pi0").size(), 7u) << dom;
  EXPECT_EQ(RowOf(dom, "pi0")[6], "0.0");
  EXPECT_EQ(RowOf(dom, "pi1")[6], "1.5");
  EXPECT_EQ(RowOf(dom, "pi2")[6], "-");

  // The spatial plan's boxes: each strip of the split layers named as its
  // part, all three there, and the scheme in the note.
  std::set<std::string> tags;
  const std::regex tag("class=\"plan-tag\">\\s*(spatial \\d/3)<");
  for (std::sregex_iterator it(dom.begin(), dom.end(), tag), end; it != end;
       ++it) {
    tags.insert((*it)[1]);
  }
  EXPECT_EQ(tags, (std::set<std::string>{"spatial 1/3", "spatial 2/3",
                                         "spatial 3/3"}))
      << dom;
  EXPECT_NE(dom.find(" into 3 parts"), std::string::npos) << dom;

  // Re-plans not made, newest first, with why.
  EXPECT_NE(dom.find("<td>declined</td><td>device pi1 is slower than "
                     "planned</td><td>it would not gain enough</td><td>4.0 "
                     "ms → 3.9 ms</td>"),
            std::string::npos)
      << dom;
  EXPECT_NE(dom.find("<td>failed</td><td>pi2 left</td><td>deploying the new "
                     "plan: pi0 is full</td>"),
            std::string::npos)
      << dom;
  EXPECT_LT(dom.find("<td>failed</td>"), dom.find("<td>declined</td>"))
      << "newest first";
  EXPECT_NE(dom.find("id=\"not-made-empty\" hidden"), std::string::npos);

  // Failed requests with their errors, and how many of the count they are.
  EXPECT_NE(dom.find("<td>8</td><td>camera</td><td>input has shape "
                     "1x3x8x8</td>"),
            std::string::npos)
      << dom;
  EXPECT_NE(dom.find("<td>7</td><td>camera</td><td>deadline exceeded on "
                     "pi1</td>"),
            std::string::npos);
  EXPECT_NE(dom.find("the latest 2 of 3, newest first"), std::string::npos);
}

}  // namespace
}  // namespace shoal
