// The Python client (python/) against shoal serve --http in this process:
// it installs offline with pip, and the example of docs/serve.md -- the
// same text as python/examples/classify_and_infer.py -- runs to its end
// with /usr/bin/python3.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/runtime_test_util.h"
#include "serve/server.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

std::string Slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `cmd` with its stderr joined to stdout; *rc its exit status.
std::string Shell(const std::string& cmd, int* rc) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (p == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int st = pclose(p);
  *rc = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

// The ```python block after `marker` in `md`.
std::string CodeBlockAfter(const std::string& md, const std::string& marker) {
  size_t at = md.find(marker);
  if (at == std::string::npos) return "";
  at = md.find("```python\n", at);
  if (at == std::string::npos) return "";
  at += 10;
  const size_t end = md.find("```", at);
  return end == std::string::npos ? "" : md.substr(at, end - at);
}

TEST(PythonClient, InstallsOfflineAndTheDocsExampleRuns) {
  int rc = 0;
  Shell("/usr/bin/python3 -c 'import numpy, setuptools, pip'", &rc);
  if (rc != 0) {
    GTEST_SKIP() << "/usr/bin/python3 lacks numpy, setuptools or pip "
                    "(scripts/install-deps.sh installs them)";
  }
  const std::string src = SHOAL_SOURCE_DIR;
  const std::string example =
      Slurp(src + "/python/examples/classify_and_infer.py");
  ASSERT_FALSE(example.empty());
  EXPECT_EQ(CodeBlockAfter(Slurp(src + "/docs/serve.md"),
                           "<!-- python/examples/classify_and_infer.py -->"),
            example)
      << "docs/serve.md's example and python/examples/classify_and_infer.py "
         "differ";

  const std::string dir = fs::temp_directory_path() /
                          ("shoal-python-test-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  // A copy: pip builds in the tree it is given.
  fs::copy(src + "/python", dir + "/python", fs::copy_options::recursive);
  std::string out = Shell(
      "/usr/bin/python3 -m pip install --no-index "
      "--no-build-isolation --no-deps --quiet --target " +
          dir + "/site " + dir + "/python",
      &rc);
  ASSERT_EQ(rc, 0) << out;

  testing::LocalWorkers workers(2);
  std::ofstream f(dir + "/cluster.yaml");
  f << "devices:\n";
  for (const auto& d : workers.cluster.devices) {
    f << "  - {name: " << d.name << ", address: " << d.address << "}\n";
  }
  f.close();
  ServeOptions o;
  o.cluster_file = dir + "/cluster.yaml";
  o.model.spec = "lenet5";
  o.listen = "127.0.0.1:0";
  o.http_listen = "127.0.0.1:0";
  o.strategy = "pipeline";
  o.rebalance = false;
  o.log_every_s = 1000;
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();

  // The package as installed, not the sources: the script's folder holds
  // no shoal_client.
  out = Shell("cd " + dir + " && PYTHONPATH=" + dir +
                  "/site /usr/bin/python3 " + src +
                  "/python/examples/classify_and_infer.py http://127.0.0.1:" +
                  std::to_string((*server)->http_port()),
              &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("ready: True"), std::string::npos) << out;
  EXPECT_NE(out.find("input [1, 1, 28, 28] output [1, 10]"), std::string::npos)
      << out;
  EXPECT_NE(out.find("largest at"), std::string::npos) << out;
  const auto st = (*server)->Snapshot();
  EXPECT_EQ(st.answered(), 3);  // one image, the tensor twice
  (*server)->Shutdown();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace shoal
