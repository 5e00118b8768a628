// The dashboard's "Try an image" form in headless Chromium (label slow;
// needs Debian's chromium, which scripts/install-deps.sh --with-test-deps
// installs): test/py/dashboard_form.py puts an image in the form, submits
// it as a person would, and reads the answer off the page; its first class
// must be the one the single-device run of the same decoded image gives.
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "io/image.h"
#include "models/load_model.h"
#include "runtime/runtime_test_util.h"
#include "serve/server.h"

extern char** environ;

namespace shoal {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(DashboardForm, ClassifiesAnImageInChromium) {
  if (!fs::exists("/usr/bin/chromium")) {
    GTEST_SKIP() << "needs Debian's chromium (scripts/install-deps.sh "
                    "--with-test-deps)";
  }
  const std::string src = SHOAL_SOURCE_DIR;
  const std::string dir = fs::temp_directory_path() /
                          ("shoal-dashboard-form-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  testing::LocalWorkers workers(2);
  {
    std::ofstream f(dir + "/cluster.yaml");
    f << "devices:\n";
    for (const auto& d : workers.cluster.devices) {
      f << "  - {name: " << d.name << ", address: " << d.address << "}\n";
    }
  }
  ServeOptions o;
  o.cluster_file = dir + "/cluster.yaml";
  o.model.spec = "lenet5";
  o.listen = "127.0.0.1:0";
  o.dashboard_listen = "127.0.0.1:0";
  o.strategy = "pipeline";
  o.rebalance = false;
  o.log_every_s = 1000;
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();

  // What the page must show first: the single-device run's top class.
  const std::string image = src + "/test/fuzz/image/c3.png";
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  const Model m = LoadModel("lenet5", lo).value();
  const Shape shape = m.graph.tensors.at(m.graph.inputs[0]).shape;
  auto x = DecodeImage(Slurp(image), image, shape, DefaultNormalization(1));
  ASSERT_TRUE(x.ok()) << x.status().message();
  const Tensor want = testing::RunWholeOrFail(m, *x);
  const size_t best =
      std::max_element(want.data.begin(), want.data.end()) - want.data.begin();

  // Chromium with the DevTools protocol on a port it picks and writes down.
  const std::string profile = dir + "/chromium";
  std::vector<std::string> args = {"/usr/bin/chromium",
                                   "--headless=new",
                                   "--no-sandbox",
                                   "--disable-gpu",
                                   "--no-first-run",
                                   "--user-data-dir=" + profile,
                                   "--remote-debugging-port=0",
                                   "about:blank"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t chromium = 0;
  ASSERT_EQ(
      posix_spawn(&chromium, argv[0], nullptr, nullptr, argv.data(), environ),
      0);
  std::string port;
  for (int i = 0; i < 300 && port.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::ifstream f(profile + "/DevToolsActivePort");
    std::getline(f, port);
  }
  std::string out;
  if (!port.empty()) {
    const std::string cmd =
        "timeout 90 /usr/bin/python3 " + src + "/test/py/dashboard_form.py " +
        port +
        " http://127.0.0.1:" + std::to_string((*server)->dashboard_port()) +
        "/ " + image + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while (p != nullptr && (n = fread(buf, 1, sizeof(buf), p)) > 0) {
      out.append(buf, n);
    }
    if (p != nullptr) pclose(p);
  }
  kill(chromium, SIGTERM);
  waitpid(chromium, nullptr, 0);
  ASSERT_FALSE(port.empty()) << "chromium wrote no DevToolsActivePort";
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_TRUE(j.is_object()) << out;
  EXPECT_EQ(j["status"].get<std::string>().rfind("answered in ", 0), 0u) << out;
  ASSERT_EQ(j["rows"].size(), 5u) << out;
  EXPECT_EQ(
      j["rows"][0].get<std::string>().rfind(std::to_string(best) + ",", 0), 0u)
      << out;
  EXPECT_NE(j["note"].get<std::string>().find("random weights"),
            std::string::npos)
      << out;
  EXPECT_EQ((*server)->Snapshot().answered(), 1);
  (*server)->Shutdown();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shoal
