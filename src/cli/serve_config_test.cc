// serve's config file: every flag has its key, values are checked as the
// flags are (a bad one names the file and the key), paths are relative to
// the file, and through the binary a flag on the command line wins over the
// file while the file fills in the rest.
#include "cli/serve_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cli/commands.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using onnx_test::RunCommand;

StatusOr<ServeSettings> Parse(const std::string& text) {
  return ParseServeConfig(text, "/etc/shoal/serve.yaml", "/etc/shoal");
}

TEST(ServeConfig, EveryKeyBecomesItsFlag) {
  auto s = Parse(
      "cluster: cluster.yaml\n"
      "model: models/net.onnx\n"
      "input-shape: 1x3x32x32\n"
      "weights-seed: 7\n"
      "listen: 0.0.0.0:7600\n"
      "advertise: 192.168.1.10\n"
      "strategy: pipeline\n"
      "objective: throughput\n"
      "concurrency: 4\n"
      "time-limit: 2.5\n"
      "monitor-interval: 0.5\n"
      "window: 6\n"
      "min-samples: 5\n"
      "imbalance: 1.25\n"
      "min-gain: 0\n"
      "cooldown: 10\n"
      "watch: 30\n"
      "timeout-ms: 5000\n"
      "max-in-flight: 64\n"
      "max-message: 64MiB\n"
      "log-every: 60\n"
      "log-format: json\n"
      "metrics: 127.0.0.1:9101\n"
      "dashboard: 127.0.0.1:8080\n"
      "http: 0.0.0.0:8000\n"
      "http-max-body: 4MiB\n"
      "http-token-file: /srv/token\n"
      "no-rebalance: true\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const ServeSettings want = {
      // Paths are relative to the file, as in a cluster file.
      {"--cluster", "/etc/shoal/cluster.yaml"},
      {"--model", "/etc/shoal/models/net.onnx"},
      {"--input-shape", "1x3x32x32"},
      {"--weights-seed", "7"},
      {"--listen", "0.0.0.0:7600"},
      {"--advertise", "192.168.1.10"},
      {"--strategy", "pipeline"},
      {"--objective", "throughput"},
      {"--concurrency", "4"},
      {"--time-limit", "2.5"},
      {"--monitor-interval", "0.5"},
      {"--window", "6"},
      {"--min-samples", "5"},
      {"--imbalance", "1.25"},
      {"--min-gain", "0"},
      {"--cooldown", "10"},
      {"--watch", "30"},
      {"--timeout-ms", "5000"},
      {"--max-in-flight", "64"},
      {"--max-message", "64MiB"},
      {"--log-every", "60"},
      {"--log-format", "json"},
      {"--metrics", "127.0.0.1:9101"},
      {"--dashboard", "127.0.0.1:8080"},
      {"--http", "0.0.0.0:8000"},
      {"--http-max-body", "4MiB"},
      {"--http-token-file", "/srv/token"},
      {"--no-rebalance", "true"}};
  EXPECT_EQ(s.value(), want);
  // A zoo model's name is not a path.
  auto zoo = Parse("model: resnet18\n");
  ASSERT_TRUE(zoo.ok()) << zoo.status().message();
  EXPECT_EQ(zoo->at("--model"), "resnet18");
}

// The file and the flags cannot drift apart: each flag of `shoal serve`
// (but --config itself) is a key, and each key a flag.
TEST(ServeConfig, KeysAreServesFlags) {
  CLI::App app;
  AddServeCommand(&app);
  CLI::App* serve = app.get_subcommand("serve");
  std::set<std::string> flags;
  for (const CLI::Option* o : serve->get_options()) {
    for (const std::string& n : o->get_lnames()) {
      if (n != "help" && n != "config") flags.insert(n);
    }
  }
  const std::vector<std::string> keys = ServeConfigKeys();
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), flags);
}

TEST(ServeConfig, EmptyFileKeepsTheDefaults) {
  auto s = Parse("# nothing set\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s.value().empty());
}

// Each bad file is refused with the file and the key at fault named.
TEST(ServeConfig, BadFilesNameTheKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"cluster: c.yaml\nclustr: x\n", "serve.yaml: unknown key 'clustr'"},
      {"imbalance: 1\n", "serve.yaml: imbalance: '1' must be above 1"},
      {"imbalance: lots\n", "serve.yaml: imbalance: 'lots' is not a number"},
      {"min-gain: 1\n", "serve.yaml: min-gain: '1' must be in [0, 1)"},
      {"window: 0\n", "serve.yaml: window: '0' must be at least 1"},
      {"window: 3000000000\n",
       "serve.yaml: window: '3000000000' is too "
       "large"},
      {"timeout-ms: 2.5\n", "serve.yaml: timeout-ms: '2.5' is not a whole"},
      {"monitor-interval: 0\n",
       "serve.yaml: monitor-interval: '0' must be "
       "above 0"},
      {"objective: fast\n",
       "serve.yaml: objective: 'fast' is not one of: "
       "latency throughput"},
      {"log-format: yaml\n",
       "serve.yaml: log-format: 'yaml' is not one of: "
       "text json"},
      {"listen: 0.0.0.0\n", "serve.yaml: listen: '0.0.0.0' needs a port"},
      {"advertise: 10.0.0.1:7600\n",
       "serve.yaml: advertise: '10.0.0.1:7600' "
       "has a port"},
      {"max-message: lots\n", "serve.yaml: max-message"},
      {"http-max-body: 10\n",
       "serve.yaml: http-max-body: '10' must be in "
       "[1024, "},
      {"no-rebalance: yes\n", "serve.yaml: no-rebalance: 'yes' is not true"},
      {"input-shape: 1xqx3\n", "serve.yaml: input-shape"},
      {"http: [a, b]\n", "serve.yaml: http must be a single value, not a list"},
      {"cluster:\n", "serve.yaml: cluster must be a single value, not empty"},
      {"- cluster.yaml\n", "serve.yaml: must be a map of settings"},
      {"cluster: [unclosed\n", "serve.yaml: "},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    auto s = Parse(text);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), Code::kInvalidArgument);
    EXPECT_NE(s.status().message().find(want), std::string::npos)
        << s.status().message();
  }
}

TEST(ServeConfig, MissingFileIsNamed) {
  auto s = LoadServeConfig("/nonexistent/serve.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("--config /nonexistent/serve.yaml: "
                                      "cannot open"),
            std::string::npos)
      << s.status().message();
}

// A directory of its own for the files a test writes.
struct TempDir {
  std::string path;
  TempDir() {
    path = fs::temp_directory_path() /
           ("shoal-serve-config-test-" + std::to_string(getpid()));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::ofstream(path + "/" + name) << text;
    return path + "/" + name;
  }
};

// Through the binary: the file's cluster is read (its path relative to the
// file) unless --cluster is given; a bad value stops serve with the file
// and key named and a non-zero exit; the file may give the required flags.
TEST(ServeConfig, BinaryTakesTheFileAndFlagsOverrideIt) {
  const TempDir dir;
  const std::string shoal = SHOAL_BINARY;
  const std::string good =
      dir.Write("serve.yaml", "cluster: missing-cluster.yaml\nmodel: lenet5\n");
  std::string out;
  // RunCommand appends: each run's output alone.
  auto serve = [&](const std::string& args) {
    out.clear();
    return RunCommand(shoal + " serve " + args, &out);
  };
  EXPECT_NE(serve("--config " + good), 0);
  EXPECT_NE(out.find(dir.path + "/missing-cluster.yaml"), std::string::npos)
      << out;
  EXPECT_NE(
      serve("--config " + good + " --cluster /nonexistent/from-flag.yaml"), 0);
  EXPECT_NE(out.find("/nonexistent/from-flag.yaml"), std::string::npos) << out;
  EXPECT_EQ(out.find("missing-cluster.yaml"), std::string::npos) << out;

  const std::string bad =
      dir.Write("bad.yaml", "cluster: c.yaml\nmodel: lenet5\nimbalance: 0.5\n");
  EXPECT_NE(serve("--config " + bad), 0);
  EXPECT_NE(out.find(bad + ": imbalance: '0.5' must be above 1"),
            std::string::npos)
      << out;
  // A bad file is refused even where the command line overrides its key:
  // it would be used the day the flag is dropped from the unit.
  EXPECT_NE(
      serve("--config " + bad + " --imbalance 2 --cluster /nonexistent/c.yaml"),
      0);
  EXPECT_NE(out.find("imbalance"), std::string::npos) << out;

  const std::string unknown =
      dir.Write("unknown.yaml", "cluster: c.yaml\nlisten-on: 1\n");
  EXPECT_NE(serve("--config " + unknown), 0);
  EXPECT_NE(out.find(unknown + ": unknown key 'listen-on'"), std::string::npos)
      << out;

  // Without the file, the model and the devices (a cluster file, DNS-SD or
  // both) are still required.
  EXPECT_NE(serve("--model lenet5"), 0);
  EXPECT_NE(out.find("serve needs --model, and --cluster or --discover"),
            std::string::npos)
      << out;
  EXPECT_NE(serve("--model lenet5 --discover 5000"), 0);
  EXPECT_NE(out.find("--discover 5000"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
