// Devices on their own addresses, with real network stacks: `shoal cluster
// up --mode netns` puts each worker in a network namespace with an IP of
// its own (10.77.N.x), joined by a bridge, its bandwidth shaped by the
// kernel. The coordinator (this host, 10.77.N.1) must tell the workers an
// address they can reach: 127.0.0.1 in a worker's namespace is the worker
// itself. Every strategy's --check, bench, serve, a killed worker and bad
// --advertise values run over it, through the CLI as a user runs them.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "emulate/emulated_cluster.h"
#include "emulate/netns.h"
#include "runtime/process_test_util.h"
#include "serve/client.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::ReadFile;
using testing::Shell;
using testing::ShoalBinary;

class NetnsCluster : public ::testing::Test {
 protected:
  // Each test its own subnet (ctest runs tests side by side).
  void Up(int subnet, const std::string& header = "") {
    if (Status s = NetnsAvailable(); !s.ok()) {
      GTEST_SKIP() << "network namespaces unavailable: " << s.message();
    }
    net_ = "10.77." + std::to_string(subnet) + ".";
    dir_ = fs::temp_directory_path() /
           ("shoal-netns-slowtest-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    file_ = dir_ + "/cluster.yaml";
    std::ofstream f(file_);
    f << header << "devices:\n";
    for (int i = 0; i < 3; ++i) {
      f << "  - {name: dev" << i << ", address: " << net_ << (i + 2)
        << ":7000, memory: 1GiB, cores: 1, cpu: 0.5, link: {bandwidth: "
           "200Mbit, latency: 1ms}}\n";
    }
    f.close();
    std::string out;
    ASSERT_EQ(Shell(ShoalBinary() + " cluster up --mode netns " + file_, &out),
              0)
        << out;
    up_ = true;
    ASSERT_NE(out.find("this host is " + net_ + "1"), std::string::npos) << out;
  }

  void TearDown() override {
    if (serve_pid_ > 0) {
      kill(serve_pid_, SIGKILL);
      waitpid(serve_pid_, nullptr, 0);
    }
    if (up_) {
      std::string out;
      EXPECT_EQ(Shell(ShoalBinary() + " cluster down --purge " + file_, &out),
                0)
          << out;
      EXPECT_FALSE(fs::exists(NetnsPath(NetnsName(ClusterTag(file_), 0))))
          << out;
    }
    if (!dir_.empty() && !HasFailure()) fs::remove_all(dir_);
  }

  std::string Plan(const std::string& model, const std::string& strategy,
                   const std::string& extra = "") {
    const std::string plan = dir_ + "/" + model + "-" + strategy + ".json";
    std::string out;
    EXPECT_EQ(Shell(ShoalBinary() + " plan " + model + " --cluster " + file_ +
                        " --strategy " + strategy + " " + extra + " -o " + plan,
                    &out),
              0)
        << out;
    return plan;
  }

  pid_t WorkerPid(int i) {
    std::ifstream f(ClusterStateDir(file_) + "/dev" + std::to_string(i) +
                    ".pid");
    pid_t p = 0;
    f >> p;
    return p;
  }

  std::string net_, dir_, file_;
  bool up_ = false;
  pid_t serve_pid_ = -1;
};

TEST_F(NetnsCluster, EveryStrategyGivesTheOneDeviceOutput) {
  Up(11);
  for (const char* s : {"pipeline", "data", "lop", "lip", "channel", "filter",
                        "spatial", "fuse", "fuse-ilp", "auto", "lcp"}) {
    const std::string plan =
        Plan("lenet5", s, std::string(s) == "lcp" ? "--branches 3" : "");
    std::string out;
    EXPECT_EQ(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                        file_ + " --check --timeout-ms 20000",
                    &out),
              0)
        << s << ": " << out;
    EXPECT_NE(out.find("(ok)"), std::string::npos) << s << ": " << out;
  }
}

TEST_F(NetnsCluster, LinksAreShapedByTheKernel) {
  Up(12);
  const std::string ns = NetnsName(ClusterTag(file_), 0);
  std::string out;
  ASSERT_EQ(Shell("ip netns exec " + ns + " tc class show dev eth0", &out), 0)
      << out;
  EXPECT_NE(out.find("rate 200Mbit"), std::string::npos) << out;
  // The transport shapes latency only: its bandwidth is the kernel's.
  const std::string log = ReadFile(ClusterStateDir(file_) + "/dev0.log");
  EXPECT_NE(log.find("link unshaped + 1"), std::string::npos) << log;
}

// One channel for all: every port of the bridge (the devices' and this
// host's) redirects what enters it to one ifb device shaped at half the
// medium's rate (each frame goes up to the access point and down).
TEST_F(NetnsCluster, ASharedMediumIsOneShapedChannel) {
  Up(16, "network: {medium: shared, bandwidth: 40Mbit}\n");
  const std::string bridge = "shoal-" + ClusterTag(file_) + "-net";
  std::string out;
  ASSERT_EQ(Shell("ip netns exec " + bridge + " tc class show dev air", &out),
            0)
      << out;
  EXPECT_NE(out.find("rate 20Mbit"), std::string::npos) << out;
  for (const char* port : {"uplink", "dev0", "dev2"}) {
    ASSERT_EQ(Shell("ip netns exec " + bridge + " tc filter show dev " + port +
                        " ingress",
                    &out),
              0)
        << out;
    EXPECT_NE(out.find("Redirect to device air"), std::string::npos)
        << port << ": " << out;
  }
  // The kernel shapes it: the workers' transport has no channel of its own.
  EXPECT_EQ(ReadFile(ClusterStateDir(file_) + "/dev0.log").find("shared"),
            std::string::npos);
  const std::string plan = Plan("lenet5", "lop");
  EXPECT_EQ(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                      file_ + " --check --timeout-ms 20000",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
}

TEST_F(NetnsCluster, BenchThenAKilledWorkerFailsFastNamingIt) {
  Up(13);
  const std::string plan = Plan("alexnet", "lop", "--input-shape 1,3,127,127");
  std::string out;
  ASSERT_EQ(Shell(ShoalBinary() + " bench --plan " + plan + " --cluster " +
                      file_ + " --requests 5",
                  &out),
            0)
      << out;
  EXPECT_NE(out.find("5/5 requests ok"), std::string::npos) << out;
  const pid_t victim = WorkerPid(1);
  ASSERT_GT(victim, 0);
  kill(victim, SIGKILL);
  const auto t0 = Clock::now();
  EXPECT_NE(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                      file_ + " --timeout-ms 10000",
                  &out),
            0)
      << out;
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(s, 20) << out;
  EXPECT_NE(out.find("dev1 (" + net_ + "3:7000)"), std::string::npos) << out;
}

TEST_F(NetnsCluster, AdvertiseNamesWhereWorkersReply) {
  Up(14);
  const std::string plan = Plan("lenet5", "lop");
  std::string out;
  // This host's address on the devices' network, and a port of our choice.
  EXPECT_EQ(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                      file_ + " --check --advertise " + net_ + "1:7391",
                  &out),
            0)
      << out;
  // An address that is not this machine's: a clear error, no hang.
  EXPECT_NE(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                      file_ + " --advertise " + net_ + "200",
                  &out),
            0);
  EXPECT_NE(out.find("cannot listen on " + net_ + "200:0"), std::string::npos)
      << out;
  // Loopback is this host's, but in a device's namespace it is the device:
  // deploy finds out before any request waits for an output.
  EXPECT_NE(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                      file_ + " --advertise 127.0.0.1 --timeout-ms 60000",
                  &out),
            0);
  EXPECT_NE(out.find("cannot reach this coordinator at 127.0.0.1:"),
            std::string::npos)
      << out;
  EXPECT_NE(Shell(ShoalBinary() + " run --plan " + plan + " --cluster " +
                      file_ + " --advertise " + net_ + "1:notaport",
                  &out),
            0);
  EXPECT_NE(out.find("--advertise"), std::string::npos) << out;
}

TEST_F(NetnsCluster, ServeAnswersAndPlansAroundALostDevice) {
  Up(15);
  auto port = FreeLoopbackPort();
  ASSERT_TRUE(port.ok());
  const std::string addr = "127.0.0.1:" + std::to_string(*port);
  const std::string log = dir_ + "/serve.log";
  serve_pid_ = testing::SpawnLogged(
      {ShoalBinary(), "serve", "--cluster", file_, "--model", "lenet5",
       "--strategy", "lop", "--listen", addr, "--monitor-interval", "0.5"},
      log);
  ServeClient client(addr);
  bool listening = false;
  for (int i = 0; i < 150 && !listening; ++i) {
    listening = client.GetStatus(1000).ok();
    if (!listening) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ASSERT_TRUE(listening) << ReadFile(log);
  std::string out;
  const std::string infer = ShoalBinary() + " infer-remote --server " + addr +
                            " --requests 3 --timeout-ms 20000";
  ASSERT_EQ(Shell(infer, &out), 0) << out << ReadFile(log);
  kill(WorkerPid(2), SIGKILL);
  EXPECT_EQ(Shell(infer, &out), 0) << out << ReadFile(log);
  EXPECT_NE(ReadFile(log).find("dev2"), std::string::npos) << ReadFile(log);
}

}  // namespace
}  // namespace shoal
