// `shoal cost` as a user runs it: the traffic per link, per uplink and per
// downlink adds up, and --reduce shows where partial sums go.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;

nlohmann::json Cost(const std::string& args) {
  std::string out;
  const std::string cmd = std::string(SHOAL_BINARY) +
                          " cost alexnet --cluster " + SHOAL_SOURCE_DIR +
                          "/examples/pi3-8.yaml " + args + " --json";
  EXPECT_EQ(RunCommand(cmd, &out), 0) << out;
  return nlohmann::json::parse(out, nullptr, false);
}

int64_t Bytes(const nlohmann::json& j, const std::string& device,
              const char* side) {
  for (const auto& d : j[side]) {
    if (d["device"] == device) return d["bytes"].get<int64_t>();
  }
  ADD_FAILURE() << "no " << side << " entry for " << device;
  return -1;
}

// Every byte a link carries leaves one uplink and enters one downlink. With
// partial sums reduced among the devices, the input device receives about
// what every other device does; sent to it, it receives several times more.
TEST(CostCmd, DownlinksShowWherePartialSumsGo) {
  const nlohmann::json peers = Cost("--strategy lip");
  const nlohmann::json hub = Cost("--strategy lip --reduce hub");
  ASSERT_FALSE(peers.is_discarded());
  ASSERT_FALSE(hub.is_discarded());
  for (const auto* j : {&peers, &hub}) {
    int64_t links = 0, up = 0, down = 0;
    for (const auto& l : (*j)["links"]) links += l["bytes"].get<int64_t>();
    for (const auto& d : (*j)["uplinks"]) up += d["bytes"].get<int64_t>();
    for (const auto& d : (*j)["downlinks"]) down += d["bytes"].get<int64_t>();
    EXPECT_GT(links, 0);
    EXPECT_EQ(up, links);
    EXPECT_EQ(down, links);
  }
  EXPECT_EQ(hub["busiest_downlink"], "pi0");
  int64_t peers_most = 0;
  for (const auto& d : peers["downlinks"])
    peers_most = std::max(peers_most, d["bytes"].get<int64_t>());
  EXPECT_GT(Bytes(hub, "pi0", "downlinks"), 4 * peers_most);
  EXPECT_LT(Bytes(peers, "pi0", "downlinks"), Bytes(hub, "pi0", "downlinks"));
}

TEST(CostCmd, ReduceTakesPeersOrHub) {
  std::string out;
  EXPECT_NE(RunCommand(std::string(SHOAL_BINARY) +
                           " cost alexnet --devices 4 --strategy lip --reduce "
                           "everywhere",
                       &out),
            0);
  EXPECT_NE(out.find("--reduce"), std::string::npos) << out;
}

// On a shared channel every byte between devices takes it twice.
TEST(CostCmd, ASharedMediumCarriesEveryLinksBytesTwice) {
  std::ifstream in(std::string(SHOAL_SOURCE_DIR) + "/examples/pi3-8.yaml");
  std::stringstream body;
  body << in.rdbuf();
  const std::string file = ::testing::TempDir() + "/cost-shared-medium.yaml";
  std::ofstream(file) << "network: {medium: shared, bandwidth: 62Mbit}\n"
                      << body.str();
  std::string out;
  ASSERT_EQ(RunCommand(std::string(SHOAL_BINARY) + " cost alexnet --cluster " +
                           file + " --strategy spatial --json",
                       &out),
            0)
      << out;
  const auto j = nlohmann::json::parse(out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << out;
  int64_t bytes = 0;
  for (const auto& d : j["uplinks"]) bytes += d["bytes"].get<int64_t>();
  ASSERT_TRUE(j.contains("medium")) << out;
  EXPECT_NEAR(j["medium"]["airtime_seconds"].get<double>(),
              2.0 * bytes * 8 / 62e6, 1e-9);
  EXPECT_FALSE(Cost("--strategy spatial").contains("medium"));
}

}  // namespace
}  // namespace shoal
