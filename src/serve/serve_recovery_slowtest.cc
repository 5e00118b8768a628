// `shoal serve` recovering devices that lost its deployment, as separate
// processes: three `shoal worker`s (each link 20 ms), `shoal serve` planning
// lenet5 over them, and this test as the client sending a steady stream.
// A worker killed and restarted on the same port, and a worker given
// another plan by another coordinator, must both end with serve answering
// on all three devices again, and every request answered exactly once,
// equal to the one-device run. No root or cgroups needed.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <regex>
#include <thread>

#include "cluster/cluster.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "partition/plan_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "runtime/coordinator.h"
#include "runtime/process_test_util.h"
#include "runtime/runtime_test_util.h"
#include "serve/client.h"
#include "util/net_address.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::ReadFile;
using testing::ShoalBinary;

constexpr int kDevices = 3;

struct Answer {
  double start_s = 0;
  int64_t generation = 0;
  bool ok = false, correct = false;
  std::string error;
};

class ServeRecovery : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/serve-recovery-" + std::to_string(getpid());
    fs::create_directories(dir_);
    std::ofstream f(dir_ + "/cluster.yaml");
    f << "devices:\n";
    for (int i = 0; i < kDevices; ++i) {
      auto port = FreeLoopbackPort();
      ASSERT_TRUE(port.ok()) << port.status().message();
      ports_.push_back(*port);
      pids_.push_back(0);
      ASSERT_TRUE(StartWorker(i)) << ReadFile(WorkerLog(i));
      f << "  - {name: dev" << i << ", address: " << Address(i) << "}\n";
    }
    f.close();
    auto port = FreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    server_ = "127.0.0.1:" + std::to_string(*port);
    serve_pid_ = testing::SpawnLogged(
        {ShoalBinary(), "serve", "--cluster", dir_ + "/cluster.yaml", "--model",
         "lenet5", "--strategy", "pipeline", "--listen", server_,
         "--monitor-interval", "0.5", "--no-rebalance"},
        dir_ + "/serve.log");
    ASSERT_GT(serve_pid_, 0);
    ServeClient client(server_);
    bool up = false;
    for (int i = 0; i < 300 && !up; ++i) {
      up = client.GetStatus(1000).ok();
      if (!up) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(up) << ReadFile(dir_ + "/serve.log");
    ModelRef ref;
    ref.spec = "lenet5";
    auto m = LoadPlanModel(ref, true);
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::move(m).value();
    input_ = RandomInput(Shape{1, 1, 28, 28}, 5);
    want_ = testing::RunWholeOrFail(model_, input_);
  }

  void TearDown() override {
    StopStream();
    if (serve_pid_ > 0) {
      kill(serve_pid_, SIGKILL);
      waitpid(serve_pid_, nullptr, 0);
    }
    for (size_t i = 0; i < pids_.size(); ++i) KillWorker(i);
    if (!HasFailure()) fs::remove_all(dir_);
  }

  std::string Address(int i) const {
    return "127.0.0.1:" + std::to_string(ports_[i]);
  }
  std::string WorkerLog(int i) const {
    return dir_ + "/dev" + std::to_string(i) + ".log";
  }

  // Worker i on its port; its weight cache survives a restart.
  bool StartWorker(int i) {
    for (int attempt = 0; attempt < 10; ++attempt) {
      std::ofstream(WorkerLog(i), std::ios::trunc).flush();
      pids_[i] = testing::SpawnLogged(
          {ShoalBinary(), "worker", "--listen", Address(i), "--name",
           "dev" + std::to_string(i), "--cache-dir",
           dir_ + "/cache" + std::to_string(i), "--link-latency", "20ms"},
          WorkerLog(i));
      const auto until = Clock::now() + std::chrono::seconds(20);
      while (Clock::now() < until) {
        if (ReadFile(WorkerLog(i)).find("listening on port") !=
            std::string::npos) {
          return true;
        }
        if (waitpid(pids_[i], nullptr, WNOHANG) != 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      KillWorker(i);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return false;
  }

  void KillWorker(int i) {
    if (pids_[i] <= 0) return;
    kill(pids_[i], SIGKILL);
    waitpid(pids_[i], nullptr, 0);
    pids_[i] = 0;
  }

  double Since() const {
    return std::chrono::duration<double>(Clock::now() - t0_).count();
  }

  // Two clients, each sending its next request when the last is answered.
  void StartStream() {
    t0_ = Clock::now();
    for (int c = 0; c < 2; ++c) {
      clients_.emplace_back([this, c] {
        ServeClient cl(server_);
        while (!stop_) {
          Answer a;
          a.start_s = Since();
          auto r = cl.Infer(input_, 30000, "test" + std::to_string(c));
          a.ok = r.ok();
          if (r.ok()) {
            a.generation = r->generation;
            a.correct = MaxRelDiff(r->output, want_) <= 1e-4;
          } else {
            a.error = r.status().message();
          }
          std::lock_guard<std::mutex> lock(mu_);
          answers_.push_back(a);
        }
      });
    }
  }
  void StopStream() {
    stop_ = true;
    for (auto& t : clients_) t.join();
    clients_.clear();
  }
  // Answers to requests started after `t` seconds.
  int AnsweredAfter(double t) {
    std::lock_guard<std::mutex> lock(mu_);
    int n = 0;
    for (const auto& a : answers_) n += a.ok && a.start_s > t;
    return n;
  }
  // Waits until `n` requests started after `t` are answered (30 s at most).
  bool WaitAnswered(double t, int n) {
    const auto until = Clock::now() + std::chrono::seconds(30);
    while (AnsweredAfter(t) < n && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return AnsweredAfter(t) >= n;
  }

  // Every request answered, correctly, once; the server counted as many.
  void ExpectEveryRequestAnswered() {
    StopStream();
    int ok = 0;
    for (const auto& a : answers_) {
      EXPECT_TRUE(a.ok) << "the request started at " << a.start_s
                        << " s failed: " << a.error;
      EXPECT_TRUE(!a.ok || a.correct) << "at " << a.start_s << " s";
      ok += a.ok;
    }
    auto s = ServeClient(server_).GetStatus(5000);
    ASSERT_TRUE(s.ok()) << s.status().message();
    EXPECT_EQ(s->accepted(), static_cast<int64_t>(answers_.size()));
    EXPECT_EQ(s->answered(), ok);
    EXPECT_EQ(s->failed(), 0);
  }

  // Whether the current generation runs on every device.
  bool ServingOnAll() {
    auto s = ServeClient(server_).GetStatus(2000);
    if (!s.ok()) return false;
    int serving = 0;
    for (const auto& d : s->devices()) serving += d.state() == "serving";
    return serving == kDevices;
  }

  std::string dir_, server_;
  std::vector<int> ports_;
  std::vector<pid_t> pids_;
  pid_t serve_pid_ = -1;
  Model model_;
  Tensor input_, want_;
  Clock::time_point t0_;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> clients_;
  std::mutex mu_;
  std::vector<Answer> answers_;
};

TEST_F(ServeRecovery, WorkerRestartedOnItsPortServesAgain) {
  StartStream();
  ASSERT_TRUE(WaitAnswered(0, 20)) << ReadFile(dir_ + "/serve.log");
  KillWorker(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_TRUE(StartWorker(1)) << ReadFile(WorkerLog(1));
  const double restarted = Since();
  // Serve finds the fresh process without its plan, deploys to it again
  // and answers on all three devices.
  const auto until = Clock::now() + std::chrono::seconds(30);
  while (!ServingOnAll() && Clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(ServingOnAll()) << ReadFile(dir_ + "/serve.log");
  const double back = Since();
  ASSERT_TRUE(WaitAnswered(back, 20)) << ReadFile(dir_ + "/serve.log");
  EXPECT_GT(AnsweredAfter(restarted), 0);
  ExpectEveryRequestAnswered();
}

TEST_F(ServeRecovery, WorkerGivenAnotherPlanIsRedeployed) {
  StartStream();
  ASSERT_TRUE(WaitAnswered(0, 20)) << ReadFile(dir_ + "/serve.log");
  // Another coordinator deploys another model to dev2 alone.
  ModelRef other;
  other.spec = "lenet-fc";
  auto m = LoadPlanModel(other, true);
  ASSERT_TRUE(m.ok()) << m.status().message();
  PlanOptions po;
  po.strategy = "pipeline";
  po.devices = testing::EqualDevices(1);
  po.model = other;
  auto p = MakePlan(m->graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  Cluster cl;
  DeviceSpec d;
  d.name = "dev2";
  d.address = Address(2);
  cl.devices.push_back(d);
  auto foreign = Coordinator::Create(*p, cl, CoordinatorOptions{});
  ASSERT_TRUE(foreign.ok()) << foreign.status().message();
  const Status deployed = (*foreign)->Deploy(m->weights, nullptr);
  ASSERT_TRUE(deployed.ok()) << deployed.message();
  const double taken = Since();
  ASSERT_TRUE(WaitAnswered(taken, 40)) << ReadFile(dir_ + "/serve.log");
  EXPECT_TRUE(ServingOnAll());
  const std::string log = ReadFile(dir_ + "/serve.log");
  EXPECT_TRUE(std::regex_search(
      log, std::regex("dev2 \\(127.0.0.1:[0-9]+, holds another deployment\\) "
                      "lost generation [0-9]+'s deployment")))
      << log;
  ExpectEveryRequestAnswered();
}

}  // namespace
}  // namespace shoal
