// A worker under a hostile peer that speaks HTTP/2 itself
// (test/py/grpc_flood.py): hundreds of connections, each sending a megabyte
// of a message that declares 100 MiB and never finishing it, round after
// round. The worker must stay within its memory budget, give the memory
// back once the peer is gone, and answer a real client throughout. And a
// message begun and never finished ends with its connection's age limit,
// whether the peer heeds the worker's GOAWAY or not.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include "runtime/process_test_util.h"
#include "runtime/wire.h"
#include "runtime/worker.h"
#include "shoal.grpc.pb.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;
using testing::ReadFile;

// Resident memory of `pid` in bytes (0 when it cannot be read).
int64_t ResidentBytes(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::atoll(line.c_str() + 6) * 1024;
    }
  }
  return 0;
}

struct FloodedWorker {
  pid_t pid = 0;
  int port = 0;
  std::string log, cache;
  ~FloodedWorker() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::error_code ec;
    std::filesystem::remove_all(cache, ec);
  }
  bool Start(const std::string& budget) {
    const std::string base =
        ::testing::TempDir() + "/flood-" + std::to_string(getpid());
    log = base + ".log";
    cache = base + ".weights";
    pid = testing::SpawnLogged(
        {testing::ShoalBinary(), "worker", "--listen", "127.0.0.1:0", "--name",
         "flooded", "--cache-dir", cache, "--memory", budget},
        log);
    const std::regex re("listening on port ([0-9]+)");
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      std::smatch m;
      const std::string text = ReadFile(log);
      if (std::regex_search(text, m, re)) {
        port = std::stoi(m[1]);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port); }
};

// Whether the worker answers Health as the coordinator asks it
// (CheckDeviceHealth): on a fresh channel, and again while the answer is
// UNAVAILABLE as IsRetryableUnavailable says. Under the flood gRPC closes
// connections that carry no call yet to win memory back (a GOAWAY), and a
// fresh client's connection is such a one for a moment; the coordinator
// reconnects.
bool Healthy(const std::string& address, std::string* why) {
  auto stub =
      rpc::Worker::NewStub(MakeChannel(address, kDefaultMaxMessageBytes));
  rpc::HealthRequest q;
  q.set_protocol(kProtocolVersion);
  rpc::HealthReply r;
  grpc::Status s;
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(5000));
    s = stub->Health(&ctx, q, &r);
  }
  for (int retry = 0; retry < 4 && IsRetryableUnavailable(s, retry); ++retry) {
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(1500));
    ctx.set_wait_for_ready(true);
    grpc::Status again = stub->Health(&ctx, q, &r);
    if (again.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED) break;
    s = again;
  }
  *why = s.error_message();
  return s.ok() && r.name() == "flooded";
}

TEST(WorkerFlood, PartialMessagesOnManyConnectionsStayWithinTheBudget) {
  if (system("/usr/bin/python3 -c 'import h2' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-h2 is missing (scripts/install-deps.sh "
                    "--with-test-deps installs it)";
  }
  constexpr int64_t kBudget = int64_t{256} << 20;
  FloodedWorker w;
  ASSERT_TRUE(w.Start("256MiB")) << ReadFile(w.log);
  const int64_t idle = ResidentBytes(w.pid);

  // 3 rounds of 200 connections x 1 MiB of a declared 100 MiB: 600 MiB
  // offered, more than twice the budget.
  const std::string out =
      ::testing::TempDir() + "/flood-" + std::to_string(getpid()) + ".json";
  const std::string cmd =
      "/usr/bin/python3 " SHOAL_SOURCE_DIR "/test/py/grpc_flood.py " +
      w.address() + " --connections 200 --rounds 3 --hold 2 > " + out + " 2>&1";
  std::thread flood([&] { (void)system(cmd.c_str()); });
  int64_t peak = 0;
  bool answered = true;
  std::string why;
  const auto until = Clock::now() + std::chrono::seconds(60);
  for (int i = 0; Clock::now() < until; ++i) {
    peak = std::max(peak, ResidentBytes(w.pid));
    // A real client is answered while the flood goes on.
    if (i % 2 == 1) {
      std::string now;
      if (!Healthy(w.address(), &now)) {
        if (answered) why = now;
        answered = false;
      }
    }
    if (ReadFile(out).find("\"round\": 3") != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  flood.join();
  const std::string report = ReadFile(out);
  ASSERT_NE(report.find("\"round\": 3"), std::string::npos) << report;
  EXPECT_TRUE(answered) << why;
  EXPECT_LT(peak, kBudget) << "idle " << idle << " bytes; flood:\n" << report;

  // The peer gone, the worker gives the memory back and still serves.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const int64_t after = ResidentBytes(w.pid);
  EXPECT_LT(after, idle + (int64_t{64} << 20))
      << "peak " << peak << ", idle " << idle;
  EXPECT_TRUE(Healthy(w.address(), &why)) << why;
}

// The JSON line the flood printed for `round`, or "".
std::string RoundLine(const std::string& report, int round) {
  const std::string key = "{\"round\": " + std::to_string(round) + ",";
  const size_t at = report.find(key);
  if (at == std::string::npos) return "";
  return report.substr(at, report.find('\n', at) - at);
}

// How many of the flood's connections the worker closed by `hold` seconds,
// its limits `o` (a worker in this process, no memory budget: no quota).
int ClosedByTheWorker(WorkerOptions o, double hold, std::string* report) {
  o.name = "aged";
  auto w = Worker::Start(o);
  EXPECT_TRUE(w.ok()) << w.status().message();
  if (!w.ok()) return -1;
  const std::string out =
      ::testing::TempDir() + "/aged-" + std::to_string(getpid()) + ".json";
  const std::string cmd =
      "/usr/bin/python3 " SHOAL_SOURCE_DIR "/test/py/grpc_flood.py 127.0.0.1:" +
      std::to_string(w.value()->port()) +
      " --connections 10 --send 65536 --rounds 1 --hold " +
      std::to_string(hold) + " --ignore-goaway > " + out + " 2>&1";
  EXPECT_EQ(system(cmd.c_str()), 0) << ReadFile(out);
  *report = ReadFile(out);
  const std::string line = RoundLine(*report, 1);
  const std::regex re("\"closed_by_server\": ([0-9]+)");
  std::smatch m;
  if (!std::regex_search(line, m, re)) return -1;
  return std::stoi(m[1]);
}

TEST(WorkerFlood, AHalfSentMessageEndsWithItsConnectionsAge) {
  if (system("/usr/bin/python3 -c 'import h2' 2>/dev/null") != 0) {
    GTEST_SKIP() << "python3-h2 is missing (scripts/install-deps.sh "
                    "--with-test-deps installs it)";
  }
  std::string report;
  WorkerOptions aged;
  aged.connection_age_ms = 500;
  aged.connection_grace_ms = 500;
  // Asked to go at about 0.5 s, closed about 0.5 s later: all ten by 3 s.
  EXPECT_EQ(ClosedByTheWorker(aged, 3, &report), 10) << report;
  // With the default limits (ten minutes, and ten more) none is, by then.
  EXPECT_EQ(ClosedByTheWorker(WorkerOptions{}, 3, &report), 0) << report;
}

}  // namespace
}  // namespace shoal
