// The in-process runner on a bounded pool: a plan of thousands of devices
// runs on a few threads and gives the one-device output, and a pool far
// smaller than the plan's devices does not deadlock on a pipeline whose
// devices wait for each other.
#include "runtime/local_runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <fstream>
#include <string>
#include <thread>

#include "engine/run_whole.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/builder.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "partition/strategy.h"

namespace shoal {
namespace {

// The process's thread count, from /proc/self/status.
int ThreadCount() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

// The most threads this process had while it lived: sampled every
// millisecond on a thread of its own.
class ThreadPeak {
 public:
  ThreadPeak()
      : th_([this] {
          while (!stop_) {
            peak_ = std::max(peak_.load(), ThreadCount());
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
          }
        }) {}
  ~ThreadPeak() { Stop(); }
  int Stop() {
    stop_ = true;
    if (th_.joinable()) th_.join();
    return peak_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<int> peak_{0};
  std::thread th_;
};

std::vector<PlanDevice> EqualDevices(int n) {
  std::vector<PlanDevice> d;
  for (int i = 0; i < n; ++i) d.push_back({"dev" + std::to_string(i), 1, 0});
  return d;
}

// Runs `p` on a runner with `opts` and compares with `m` run whole.
void ExpectExact(const Model& m, const Plan& p, const LocalRunOptions& opts,
                 RunStats* stats = nullptr) {
  auto runner = LocalRunner::Create(p, m.weights, opts);
  ASSERT_TRUE(runner.ok()) << runner.status().message();
  const Tensor x = RandomInput(p.input_shape, 5);
  Tensor out;
  RunStats st;
  const Status s = (*runner)->Run(x, &out, &st);
  ASSERT_TRUE(s.ok()) << s.message();
  auto want = RunWhole(m, x);
  ASSERT_TRUE(want.ok()) << want.status().message();
  EXPECT_LE(MaxRelDiff(out, *want), 1e-4);
  if (stats != nullptr) *stats = std::move(st);
}

// 3 000 devices: each computes one output of a wide fully connected layer.
// A thread per device would add 3 000 threads; the pool adds its few.
TEST(LocalRunner, ThousandsOfDevicesRunOnABoundedPool) {
  constexpr int kDevices = 3000;
  GraphBuilder b("wide-fc");
  std::string x = b.Input("x", {1, 8});
  x = b.Linear("fc", x, kDevices, true);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 11);
  PlanOptions po;
  po.strategy = "lop";
  po.devices = EqualDevices(kDevices);
  po.model.spec = m.graph.name;
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->devices.size(), static_cast<size_t>(kDevices));
  ThreadPeak peak;
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const int before = ThreadCount();
  RunStats stats;
  ASSERT_NO_FATAL_FAILURE(ExpectExact(m, *p, LocalRunOptions{}, &stats));
  const int most = peak.Stop();
  const int pool = static_cast<int>(LocalPoolThreads(LocalRunOptions{}));
  // Slack for threads other libraries start or end meanwhile.
  EXPECT_LE(most - before, pool + 8)
      << "threads before " << before << ", at most " << most << ", pool "
      << pool;
  // Each task's compute time is its own, measured on whichever thread ran it.
  for (const auto& t : p->tasks) EXPECT_GE(stats.task_ms[t.id], 0);
}

// A pipeline over 4 devices on one thread: each device waits for the one
// before it, so the pool runs a device when its input is in, not a loop per
// device that would hold the only thread waiting.
TEST(LocalRunner, OneThreadRunsAPipelineOfDevicesThatWaitForEachOther) {
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("lenet5", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  for (const std::string strategy : {"pipeline", "spatial", "lop"}) {
    PlanOptions po;
    po.strategy = strategy;
    po.devices = EqualDevices(4);
    po.model.spec = "lenet5";
    auto p = MakePlan(m->graph, po);
    ASSERT_TRUE(p.ok()) << strategy << ": " << p.status().message();
    for (int threads : {1, 2}) {
      LocalRunOptions o;
      o.max_threads = threads;
      SCOPED_TRACE(strategy + " on " + std::to_string(threads) + " threads");
      ASSERT_NO_FATAL_FAILURE(ExpectExact(*m, *p, o));
    }
  }
}

TEST(LocalRunner, PoolIsTwiceTheCoresAndAtLeastFour) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(LocalPoolThreads(LocalRunOptions{}),
            std::max<size_t>(4, 2 * cores));
  LocalRunOptions o;
  o.max_threads = 3;
  EXPECT_EQ(LocalPoolThreads(o), 3u);
}

}  // namespace
}  // namespace shoal
