#include "cli/worker_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace shoal {
namespace {

StatusOr<WorkerSettings> Parse(const std::string& text) {
  return ParseWorkerConfig(text, "/etc/shoal/worker.yaml", "/etc/shoal");
}

TEST(WorkerConfig, EveryKeyBecomesItsFlag) {
  auto s = Parse(
      "listen: 0.0.0.0:7000\n"
      "name: pi-kitchen\n"
      "memory: 768MiB\n"
      "threads: 4\n"
      "backend: reference\n"
      "cache-dir: weights\n"
      "cache-size: 2GiB\n"
      "max-message: 64MiB\n"
      "metrics: 127.0.0.1:9100\n"
      "announce: false\n"
      "tls: {ca: tls/ca.crt, cert: /srv/pi.crt, key: tls/pi.key}\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const WorkerSettings want = {
      {"--listen", "0.0.0.0:7000"},
      {"--name", "pi-kitchen"},
      {"--memory", "768MiB"},
      {"--threads", "4"},
      {"--backend", "reference"},
      // Paths are relative to the file, as in a cluster file.
      {"--cache-dir", "/etc/shoal/weights"},
      {"--cache-size", "2GiB"},
      {"--max-message", "64MiB"},
      {"--metrics", "127.0.0.1:9100"},
      {"--announce", "false"},
      {"--tls-ca", "/etc/shoal/tls/ca.crt"},
      {"--tls-cert", "/srv/pi.crt"},
      {"--tls-key", "/etc/shoal/tls/pi.key"}};
  EXPECT_EQ(s.value(), want);
}

TEST(WorkerConfig, EmptyFileKeepsTheDefaults) {
  auto s = Parse("# nothing set\n");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s.value().empty());
}

// Each bad file is refused with the file and the key at fault named.
TEST(WorkerConfig, BadFilesNameTheKey) {
  const std::pair<std::string, std::string> cases[] = {
      {"listen: 0.0.0.0:7000\nlisten-on: x\n", "unknown key 'listen-on'"},
      {"memory: lots\n", "worker.yaml: memory"},
      {"threads: -2\n", "worker.yaml: threads: '-2' is not a count"},
      {"threads: four\n", "worker.yaml: threads: 'four' is not a count"},
      {"listen: 0.0.0.0\n", "worker.yaml: listen: '0.0.0.0' needs a port"},
      {"backend: cuda\n", "worker.yaml: backend"},
      {"name: [a, b]\n",
       "worker.yaml: name must be a single value, not a list"},
      {"tls: {ca: a, crt: b}\n", "tls has an unknown key 'crt'"},
      {"tls: certs\n", "worker.yaml: tls must be a map"},
      {"- listen: 1\n", "must be a map of settings"},
      {"listen: [0.0.0.0:7000\n", "/etc/shoal/worker.yaml: yaml-cpp"},
      {"name: ''\n", "worker.yaml: name: is empty"},
      {"announce: maybe\n", "worker.yaml: announce: 'maybe' is not true"},
      {"metrics: 9100\n", "worker.yaml: metrics"},
  };
  for (const auto& [text, want] : cases) {
    auto s = Parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_NE(s.status().message().find(want), std::string::npos)
        << text << " -> " << s.status().message();
  }
}

TEST(WorkerConfig, MissingFileIsNamed) {
  auto s = LoadWorkerConfig("/nonexistent/worker.yaml");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find(
                "--config /nonexistent/worker.yaml: cannot open"),
            std::string::npos)
      << s.status().message();
}

TEST(WorkerConfig, LoadResolvesPathsAgainstTheFile) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() /
                       ("shoal-worker-config-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "worker.yaml") << "cache-dir: cache\n";
  auto s = LoadWorkerConfig((dir / "worker.yaml").string());
  fs::remove_all(dir);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s.value().at("--cache-dir"), (dir / "cache").string());
}

}  // namespace
}  // namespace shoal
