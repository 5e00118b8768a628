// Metrics and dashboard end to end, as separate processes: three
// `shoal worker --metrics` and `shoal serve --metrics --dashboard` over
// them on 127.0.0.1, a stream of requests, then
//  - a real Prometheus (Debian's /usr/bin/prometheus) scrapes every endpoint
//    and its query API must show what ran: the answered requests, a task
//    run per task of the plan and request, the bytes each device sent to
//    another equal to what that one received from it, on the plan's links
//    only; `promtool check metrics` passes on each endpoint's text;
//  - headless Chromium loads the dashboard: every device of the cluster is
//    on the page, and the request count it shows rises with more requests;
//    a screenshot is saved in the test's output directory.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "graph/random_input.h"
#include "runtime/process_test_util.h"
#include "serve/client.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using testing::ReadFile;
using testing::Shell;
using testing::ShoalBinary;

constexpr int kDevices = 3;
constexpr int kRequests = 20;

// A port free now (the kernel's pick); for programs that need a number.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a));
  socklen_t len = sizeof(a);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

// The first number `re` captures in the file at `log`, waiting up to 30 s
// for it to appear; -1 if it does not.
int WaitForNumber(const std::string& log, const std::regex& re) {
  for (int i = 0; i < 300; ++i) {
    const std::string text = ReadFile(log);
    std::smatch m;
    if (std::regex_search(text, m, re)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

// GET http://127.0.0.1:port/path; the body, or "" on failure.
std::string Get(int port, const std::string& path, int* status = nullptr) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(5);
  c.set_read_timeout(10);
  auto r = c.Get(path);
  if (status != nullptr) *status = r ? r->status : -1;
  return r ? r->body : "";
}

class Observability : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory of its own per test: a log left by another would give
    // the port of a process gone.
    dir_ = fs::temp_directory_path() /
           ("shoal-observability-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream cluster(dir_ + "/cluster.yaml");
    cluster << "devices:\n";
    for (int i = 0; i < kDevices; ++i) {
      const std::string name = "dev" + std::to_string(i);
      const std::string log = dir_ + "/" + name + ".log";
      pids_.push_back(testing::SpawnLogged(
          {ShoalBinary(), "worker", "--listen", "127.0.0.1:0", "--name", name,
           "--threads", "1", "--cache-dir", dir_ + "/cache-" + name,
           "--metrics", "127.0.0.1:0"},
          log));
      const int port =
          WaitForNumber(log, std::regex("listening on port (\\d+)"));
      const int metrics =
          WaitForNumber(log, std::regex("metrics on port (\\d+)"));
      ASSERT_GT(port, 0) << ReadFile(log);
      ASSERT_GT(metrics, 0) << ReadFile(log);
      worker_metrics_.push_back(metrics);
      cluster << "  - {name: " << name << ", address: 127.0.0.1:" << port
              << ", link: {bandwidth: 1Gbit, latency: 1ms}}\n";
    }
    cluster.close();
    const std::string log = dir_ + "/serve.log";
    pids_.push_back(testing::SpawnLogged(
        {ShoalBinary(), "serve", "--cluster", dir_ + "/cluster.yaml", "--model",
         "lenet5", "--strategy", "pipeline", "--listen", "127.0.0.1:0",
         "--metrics", "127.0.0.1:0", "--dashboard", "127.0.0.1:0",
         "--monitor-interval", "0.5", "--log-every", "1", "--no-rebalance"},
        log));
    serve_port_ =
        WaitForNumber(log, std::regex("listening on \\S+ \\(port (\\d+)\\)"));
    serve_metrics_ =
        WaitForNumber(log, std::regex("metrics on \\S+ \\(port (\\d+)\\)"));
    dashboard_ =
        WaitForNumber(log, std::regex("dashboard on http://[^:]+:(\\d+)/"));
    ASSERT_GT(serve_port_, 0) << ReadFile(log);
    ASSERT_GT(serve_metrics_, 0) << ReadFile(log);
    ASSERT_GT(dashboard_, 0) << ReadFile(log);
  }

  void TearDown() override {
    for (pid_t p : pids_) {
      kill(p, SIGTERM);
      waitpid(p, nullptr, 0);
    }
    if (!HasFailure()) fs::remove_all(dir_);
  }

  // `n` requests, one after another; all must be answered.
  void Send(int n) {
    ServeClient client("127.0.0.1:" + std::to_string(serve_port_));
    const Tensor x = RandomInput({1, 1, 28, 28}, 5);
    for (int i = 0; i < n; ++i) {
      auto r = client.Infer(x, 20000);
      ASSERT_TRUE(r.ok()) << r.status().message() << "\n"
                          << ReadFile(dir_ + "/serve.log");
    }
  }

  nlohmann::json DashboardStatus() {
    int status = 0;
    const std::string body = Get(dashboard_, "/api/status", &status);
    EXPECT_EQ(status, 200) << body;
    return nlohmann::json::parse(body, nullptr, false);
  }

  std::string dir_;
  std::vector<pid_t> pids_;
  std::vector<int> worker_metrics_;
  int serve_port_ = 0, serve_metrics_ = 0, dashboard_ = 0;
};

// A running Prometheus on loopback, its data in `dir`, killed at the end.
class Prometheus {
 public:
  Prometheus(const std::string& dir, const std::string& config) : dir_(dir) {
    port_ = FreePort();
    std::ofstream(dir + "/prometheus.yml") << config;
    pid_ = testing::SpawnLogged(
        {"/usr/bin/prometheus", "--config.file=" + dir + "/prometheus.yml",
         "--storage.tsdb.path=" + dir + "/tsdb",
         "--web.listen-address=127.0.0.1:" + std::to_string(port_)},
        dir + "/prometheus.log");
  }
  ~Prometheus() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  bool Ready() {
    for (int i = 0; i < 300; ++i) {
      int status = 0;
      Get(port_, "/-/ready", &status);
      if (status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  // The value of an instant query that yields one number; NaN if none.
  double Query(const std::string& promql) {
    const std::string body =
        Get(port_, "/api/v1/query?query=" +
                       httplib::detail::encode_query_param(promql));
    auto j = nlohmann::json::parse(body, nullptr, false);
    if (j.is_discarded() || j["status"] != "success") return std::nan("");
    const auto& r = j["data"]["result"];
    if (r.size() != 1) return std::nan("");
    return std::stod(r[0]["value"][1].get<std::string>());
  }
  std::string log() const { return ReadFile(dir_ + "/prometheus.log"); }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(Observability, PrometheusScrapesWhatRan) {
  ASSERT_TRUE(fs::exists("/usr/bin/prometheus") &&
              fs::exists("/usr/bin/promtool"))
      << "needs Debian's prometheus (scripts/install-deps.sh --with-test-deps)";
  Send(kRequests);
  const nlohmann::json status = DashboardStatus();
  ASSERT_FALSE(status.is_discarded());
  const auto& plan = status["plan"];
  const int tasks = static_cast<int>(plan["tasks"].size());
  ASSERT_GT(tasks, 0);

  // Every endpoint passes promtool's checks.
  std::vector<int> endpoints = worker_metrics_;
  endpoints.push_back(serve_metrics_);
  for (int port : endpoints) {
    const std::string text = Get(port, "/metrics");
    ASSERT_FALSE(text.empty()) << "port " << port;
    const std::string file = dir_ + "/metrics-" + std::to_string(port) + ".txt";
    std::ofstream(file) << text;
    std::string out;
    EXPECT_EQ(Shell("promtool check metrics < " + file, &out), 0) << out << "\n"
                                                                  << text;
  }

  // Each worker target carries its device name, as docs/serve.md shows.
  std::string config =
      "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
      "scrape_configs:\n"
      "  - job_name: shoal-worker\n"
      "    static_configs:\n";
  for (int i = 0; i < kDevices; ++i) {
    config +=
        "      - {targets: ['127.0.0.1:" + std::to_string(worker_metrics_[i]) +
        "'], labels: {device: dev" + std::to_string(i) + "}}\n";
  }
  config +=
      "  - job_name: shoal-serve\n    static_configs:\n"
      "      - targets: ['127.0.0.1:" +
      std::to_string(serve_metrics_) + "']\n";
  Prometheus prom(dir_, config);
  ASSERT_TRUE(prom.Ready()) << prom.log();

  // Scraped once every target has been seen with the final counts.
  const std::string answered =
      "sum(shoal_serve_requests_total{outcome=\"answered\"})";
  const std::string runs = "sum(shoal_worker_task_seconds_count)";
  bool seen = false;
  for (int i = 0; i < 300 && !seen; ++i) {
    seen = prom.Query("count(up == 1)") == kDevices + 1 &&
           prom.Query(answered) == kRequests &&
           prom.Query(runs) == double(kRequests) * tasks;
    if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(seen) << "up: " << prom.Query("count(up == 1)")
                    << ", answered: " << prom.Query(answered)
                    << ", task runs: " << prom.Query(runs) << " (want "
                    << kRequests * tasks << ")\n"
                    << prom.log();
  EXPECT_EQ(prom.Query("sum(shoal_serve_request_duration_seconds_count)"),
            kRequests);
  EXPECT_EQ(prom.Query("sum(shoal_serve_requests_total) - " + answered), 0);
  EXPECT_EQ(prom.Query("sum(shoal_serve_device_up)"), kDevices);
  EXPECT_EQ(prom.Query("sum(shoal_serve_replans_total{kind=\"start\"})"), 1);
  EXPECT_EQ(prom.Query("sum(shoal_worker_deployments_total)"), kDevices);
  EXPECT_EQ(prom.Query("count(shoal_worker_plan_info)"), kDevices);
  EXPECT_EQ(prom.Query("sum(shoal_worker_errors_total)"), 0);
  EXPECT_GT(prom.Query("sum(shoal_worker_busy_seconds_total)"), 0);
  // The model's output reaches the coordinator, from one device.
  EXPECT_GT(
      prom.Query("sum(shoal_worker_bytes_sent_total{peer=\"coordinator\"})"),
      0);

  // Between devices: what one sent to another is what that one received
  // from it, on every link of the plan, and nothing elsewhere.
  std::set<std::pair<int, int>> links;
  for (const auto& l : plan["links"]) {
    links.insert({l["from"].get<int>(), l["to"].get<int>()});
  }
  ASSERT_FALSE(links.empty());
  for (int from = 0; from < kDevices; ++from) {
    for (int to = 0; to < kDevices; ++to) {
      if (from == to) continue;
      const std::string a = "dev" + std::to_string(from);
      const std::string b = "dev" + std::to_string(to);
      const double sent =
          prom.Query("sum(shoal_worker_bytes_sent_total{device=\"" + a +
                     "\",peer=\"" + b + "\"}) or vector(0)");
      const double received =
          prom.Query("sum(shoal_worker_bytes_received_total{device=\"" + b +
                     "\",peer=\"" + a + "\"}) or vector(0)");
      EXPECT_EQ(sent, received) << a << " -> " << b;
      if (links.count({from, to})) {
        EXPECT_GT(sent, 0) << a << " -> " << b;
      } else {
        EXPECT_EQ(sent, 0) << a << " -> " << b;
      }
    }
  }
}

// Headless Chromium's DOM of the page after `budget_ms` of virtual time.
std::string DumpDom(const std::string& url, const std::string& profile,
                    int budget_ms, const std::string& screenshot = "") {
  std::string cmd =
      "/usr/bin/chromium --headless=new --no-sandbox "
      "--disable-gpu --no-first-run --user-data-dir=" +
      profile + " --virtual-time-budget=" + std::to_string(budget_ms);
  if (!screenshot.empty()) {
    cmd +=
        " --window-size=1280,1500 --hide-scrollbars --screenshot=" + screenshot;
  } else {
    cmd += " --dump-dom";
  }
  cmd += " '" + url + "' 2>/dev/null";
  std::string out;
  FILE* p = popen(("timeout 120 " + cmd).c_str(), "r");
  if (p == nullptr) return "";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

int AnsweredOnPage(const std::string& dom) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex("id=\"answered\">(\\d+)<"))) {
    return -1;
  }
  return std::stoi(m[1]);
}

TEST_F(Observability, DashboardShowsTheClusterAndUpdates) {
  ASSERT_TRUE(fs::exists("/usr/bin/chromium"))
      << "needs Debian's chromium (scripts/install-deps.sh --with-test-deps)";
  Send(5);
  const std::string url =
      "http://127.0.0.1:" + std::to_string(dashboard_) + "/";
  const std::string profile = dir_ + "/chromium";
  const std::string first = DumpDom(url, profile, 3000);
  for (int i = 0; i < kDevices; ++i) {
    const std::string name = "dev" + std::to_string(i);
    EXPECT_NE(first.find("class=\"device\" data-name=\"" + name + "\""),
              std::string::npos)
        << name << " is not in the cluster picture:\n"
        << first;
    EXPECT_NE(first.find("class=\"plan-device\" data-name=\"" + name + "\""),
              std::string::npos)
        << name << " is not in the plan picture";
  }
  EXPECT_NE(first.find("class=\"link-bytes\""), std::string::npos)
      << "no link of the plan drawn";
  EXPECT_NE(first.find("<canvas id=\"history-chart\""), std::string::npos);
  EXPECT_EQ(first.find("no answer from shoal serve"), std::string::npos);
  EXPECT_EQ(AnsweredOnPage(first), 5) << first;

  Send(7);
  const std::string second = DumpDom(url, profile, 3000);
  EXPECT_EQ(AnsweredOnPage(second), 12) << second;

  // The page after a few polls, for people: in the test's output directory.
  const std::string shot = ::testing::TempDir() + "/dashboard.png";
  DumpDom(url, profile, 4000, shot);
  ASSERT_TRUE(fs::exists(shot) && fs::file_size(shot) > 10000)
      << "no screenshot at " << shot;
  std::cout << "dashboard screenshot: " << shot << std::endl;
}

}  // namespace
}  // namespace shoal
