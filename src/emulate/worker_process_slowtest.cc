// The distributed runtime with real `shoal worker` processes on 127.0.0.1
// (the binary this build made), each on a port the kernel picked: every
// strategy equals the one-device run, deploy caching, a worker killed with
// SIGKILL or frozen with SIGSTOP mid-request (the request fails within a few
// seconds, long before its deadline, naming the device; after a restart the
// next request succeeds), `shoal bench` stopping at a killed worker with a
// partial report, garbage and oversized
// messages leave a worker up, a too-small --memory refuses with the numbers,
// and `shoal plan --branches` + `shoal run --cluster --check` end to end.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "cluster/cluster.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "io/image.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_test_util.h"
#include "partition/plan_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "partition/vit_test_model.h"
#include "runtime/coordinator.h"
#include "runtime/process_test_util.h"
#include "runtime/runtime_test_util.h"
#include "runtime/wire.h"
#include "util/net_address.h"

namespace shoal {
namespace {

#define ASSERT_OK(expr)                   \
  do {                                    \
    const Status s_ = (expr);             \
    ASSERT_TRUE(s_.ok()) << s_.message(); \
  } while (0)

using Clock = std::chrono::steady_clock;

using testing::ReadFile;
using testing::RunWholeOrFail;
using testing::ShoalBinary;

constexpr uint64_t kInputSeed = 11;

// One `shoal worker` child process. Its output goes to a log file, from
// which the port it bound is read ("listening on port N").
class WorkerProcess {
 public:
  // port 0: any free port.
  static std::unique_ptr<WorkerProcess> Start(
      const std::string& name, int port,
      const std::vector<std::string>& extra = {}) {
    auto w = std::unique_ptr<WorkerProcess>(new WorkerProcess);
    w->name_ = name;
    w->extra_ = extra;
    // Binding a port a moment ago released can race with other tests.
    for (int attempt = 0; attempt < 10; ++attempt) {
      if (w->Spawn(port)) return w;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    ADD_FAILURE() << "worker " << name
                  << " did not start: " << ReadFile(w->log_);
    return nullptr;
  }
  ~WorkerProcess() {
    Stop();
    std::error_code ec;
    if (!cache_.empty()) std::filesystem::remove_all(cache_, ec);
  }

  const std::string& name() const { return name_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  bool Alive() {
    if (pid_ <= 0) return false;
    return waitpid(pid_, nullptr, WNOHANG) == 0;
  }
  void Kill9() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  // A fresh process on the same port, as an operator would restart it.
  bool Restart() {
    Stop();
    for (int attempt = 0; attempt < 10; ++attempt) {
      if (Spawn(port_)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return false;
  }
  std::string log() const { return ReadFile(log_); }
  const std::string& cache_dir() const { return cache_; }

 private:
  WorkerProcess() = default;

  bool Spawn(int port) {
    // A fresh, empty log: the port must not be read from an older one.
    static std::atomic<int> counter{0};
    log_ = ::testing::TempDir() + "/worker-" + name_ + "-" +
           std::to_string(getpid()) + "-" + std::to_string(counter++) + ".log";
    std::ofstream(log_, std::ios::trunc).flush();
    // Its weight cache outlives a restart, as on a device.
    if (cache_.empty()) {
      cache_ = ::testing::TempDir() + "/worker-" + name_ + "-" +
               std::to_string(getpid()) + "-" + std::to_string(counter) +
               ".weights";
    }
    std::vector<std::string> args = {
        ShoalBinary(), "worker",
        "--listen",    "127.0.0.1:" + std::to_string(port),
        "--name",      name_,
        "--cache-dir", cache_};
    args.insert(args.end(), extra_.begin(), extra_.end());
    pid_ = testing::SpawnLogged(args, log_);
    if (pid_ < 0) {
      pid_ = 0;
      return false;
    }
    const std::regex re("listening on port ([0-9]+)");
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      std::smatch mt;
      const std::string text = ReadFile(log_);
      if (std::regex_search(text, mt, re)) {
        port_ = std::stoi(mt[1]);
        return true;
      }
      if (!Alive()) {
        pid_ = 0;
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    Kill9();
    return false;
  }
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 100 && Alive(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (Alive()) kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }

  std::string name_, log_, cache_;
  std::vector<std::string> extra_;
  int port_ = 0;
  pid_t pid_ = 0;
};

// N worker processes and the cluster naming them.
struct ProcessCluster {
  std::vector<std::unique_ptr<WorkerProcess>> workers;
  Cluster cluster;
  explicit ProcessCluster(int n, const std::vector<std::string>& extra = {}) {
    for (int i = 0; i < n; ++i) {
      auto w = WorkerProcess::Start("dev" + std::to_string(i), 0, extra);
      if (!w) return;
      DeviceSpec d;
      d.name = w->name();
      d.address = w->address();
      cluster.devices.push_back(d);
      workers.push_back(std::move(w));
    }
  }
  bool ok(int n) const { return static_cast<int>(workers.size()) == n; }
};

Model LoadRef(const ModelRef& ref) {
  auto m = LoadPlanModel(ref, true);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

Plan MakeTestPlan(const Model& m, const ModelRef& ref,
                  const std::string& strategy, int n) {
  PlanOptions po;
  po.strategy = strategy;
  po.devices = testing::EqualDevices(n);
  po.model = ref;
  auto p = MakePlan(m.graph, po);
  EXPECT_TRUE(p.ok()) << strategy << ": " << p.status().message();
  return std::move(p).value();
}

TEST(WorkerProcesses, EveryStrategyEqualsOneDevice) {
  ProcessCluster pc(3);
  ASSERT_TRUE(pc.ok(3));
  std::map<std::string, int> ran;
  // A small ViT too, for the strategy that splits attention (heads), as a
  // file: workers get it from the plan like any ONNX model.
  const std::string vit =
      ::testing::TempDir() + "/vit-small-" + std::to_string(getpid()) + ".onnx";
  ASSERT_OK(ExportOnnx(testing::SmallVit(), vit));
  for (const std::string& model :
       {std::string("lenet5"), std::string("cifarnet"), vit}) {
    for (const auto& strategy : StrategyNames()) {
      ModelRef ref;
      ref.spec = model;
      // LCP runs the branched model; it must equal that model run whole.
      // A ViT has no LCP branches (its patches' reshape fixes the width).
      if (strategy == "lcp" && model == vit) continue;
      if (strategy == "lcp") ref.lcp_branches = 3;
      const Model m = LoadRef(ref);
      const Tensor x =
          RandomInput(m.graph.FindTensor(m.graph.inputs[0])->shape, kInputSeed);
      const Tensor want = RunWholeOrFail(m, x);
      PlanOptions po;
      po.strategy = strategy;
      po.devices = testing::EqualDevices(3);
      po.model = ref;
      auto p = MakePlan(m.graph, po);
      if (!p.ok()) continue;  // a split that does not apply to this model
      auto c = Coordinator::Create(p.value(), pc.cluster, {});
      ASSERT_TRUE(c.ok()) << c.status().message();
      Status d = c.value()->Deploy(m.weights, nullptr);
      ASSERT_TRUE(d.ok()) << model << " " << strategy << ": " << d.message();
      for (int64_t seq = 0; seq < 3; ++seq) {  // data: every replica
        Tensor got;
        Status s = c.value()->Run(x, &got, nullptr, seq);
        ASSERT_TRUE(s.ok()) << model << " " << strategy << ": " << s.message();
        EXPECT_LE(MaxRelDiff(got, want), 1e-4) << model << " " << strategy;
      }
      ran[strategy]++;
    }
    // One more plan a strategy's defaults leave out: on the ViT, heads
    // with its reductions in chunks of tokens, each sent while the next
    // computes; on the CNNs, spatial on 2-D tiles (halos from the tiles
    // beside and across).
    ModelRef ref;
    ref.spec = model;
    const Model m = LoadRef(ref);
    const Tensor x =
        RandomInput(m.graph.FindTensor(m.graph.inputs[0])->shape, kInputSeed);
    PlanOptions po;
    po.devices = testing::EqualDevices(3);
    po.model = ref;
    if (model == vit) {
      po.strategy = "heads";
      po.overlap_reductions = true;
    } else {
      po.strategy = "spatial";
      po.tiles = TileShape::k2D;
    }
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << model << ": " << p.status().message();
    auto c = Coordinator::Create(p.value(), pc.cluster, {});
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_OK(c.value()->Deploy(m.weights, nullptr));
    Tensor got;
    Status s = c.value()->Run(x, &got, nullptr, 0);
    ASSERT_TRUE(s.ok()) << model << " " << po.strategy << ": " << s.message();
    EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, x)), 1e-4) << model;
  }
  for (const auto& s : StrategyNames()) {
    // windows needs a Swin, which PyTorch's export gives: its own test
    // below (WindowsOnASmallSwinEqualsOneDevice).
    if (s == "windows") continue;
    EXPECT_GT(ran[s], 0) << s << " ran on no model";
  }
  for (auto& w : pc.workers) EXPECT_TRUE(w->Alive()) << w->log();
}

// Scattered broadcasts (each chunk to one receiver, which passes it to the
// rest) between worker processes: LCP's input to five branches, and the
// input of each layer lop splits five ways.
TEST(WorkerProcesses, ScatteredBroadcastsEqualOneDevice) {
  ProcessCluster pc(5);
  ASSERT_TRUE(pc.ok(5));
  for (const std::string strategy : {"lcp", "lop"}) {
    ModelRef ref;
    ref.spec = "cifarnet";
    if (strategy == "lcp") ref.lcp_branches = 5;
    const Model m = LoadRef(ref);
    const Tensor x =
        RandomInput(m.graph.FindTensor(m.graph.inputs[0])->shape, kInputSeed);
    PlanOptions po;
    po.strategy = strategy;
    po.devices = testing::EqualDevices(5);
    po.model = ref;
    po.broadcast_fanout = kMaxBroadcastFanout;
    po.broadcast_scatter = true;
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << strategy << ": " << p.status().message();
    ASSERT_TRUE(p->broadcast.scatter);
    p->broadcast.chunk_bytes = 1024;  // every broadcast several chunks
    auto c = Coordinator::Create(p.value(), pc.cluster, {});
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_OK(c.value()->Deploy(m.weights, nullptr));
    for (int64_t seq = 0; seq < 2; ++seq) {
      Tensor got;
      Status s = c.value()->Run(x, &got, nullptr, seq);
      ASSERT_TRUE(s.ok()) << strategy << ": " << s.message();
      EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, x)), 1e-4) << strategy;
    }
  }
  for (auto& w : pc.workers) EXPECT_TRUE(w->Alive()) << w->log();
}

// windows on torchvision's small Swin (test/py/export_torchvision.py,
// `swin`), as a file the workers load from the plan: the shifted blocks'
// rows and the patch mergings' bands travel between worker processes.
TEST(WorkerProcesses, WindowsOnASmallSwinEqualsOneDevice) {
  onnx_test::TempDir dir;
  std::string out;
  const int rc =
      onnx_test::RunCommand(onnx_test::PyScript("export_torchvision.py") + " " +
                                dir.path() + " swin:17",
                            &out);
  if (rc == onnx_test::kPythonSkip) GTEST_SKIP() << "torch missing: " << out;
  ASSERT_EQ(rc, 0) << out;
  ProcessCluster pc(4);
  ASSERT_TRUE(pc.ok(4));
  ModelRef ref;
  ref.spec = dir.File("swin_17.onnx");
  const Model m = LoadRef(ref);
  const Tensor x =
      RandomInput(m.graph.FindTensor(m.graph.inputs[0])->shape, kInputSeed);
  const Tensor want = RunWholeOrFail(m, x);
  for (int n : {3, 4}) {
    PlanOptions po;
    po.strategy = "windows";
    po.devices = testing::EqualDevices(n);
    po.model = ref;
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << p.status().message();
    Cluster cluster = pc.cluster;
    cluster.devices.resize(n);
    auto c = Coordinator::Create(p.value(), cluster, {});
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_OK(c.value()->Deploy(m.weights, nullptr));
    for (int64_t seq = 0; seq < 2; ++seq) {
      Tensor got;
      Status s = c.value()->Run(x, &got, nullptr, seq);
      ASSERT_TRUE(s.ok()) << n << " devices: " << s.message();
      EXPECT_LE(MaxRelDiff(got, want), 1e-4) << n << " devices";
    }
  }
  for (auto& w : pc.workers) EXPECT_TRUE(w->Alive()) << w->log();
}

TEST(WorkerProcesses, SecondDeployUploadsNoWeights) {
  ProcessCluster pc(2);
  ASSERT_TRUE(pc.ok(2));
  ModelRef ref;
  ref.spec = "cifarnet";
  const Model m = LoadRef(ref);
  Plan p = MakeTestPlan(m, ref, "lop", 2);
  DeployReport r1, r2;
  {
    auto c = Coordinator::Create(p, pc.cluster, {});
    ASSERT_TRUE(c.ok());
    ASSERT_OK(c.value()->Deploy(m.weights, &r1));
  }
  auto c = Coordinator::Create(p, pc.cluster, {});  // another process would
  ASSERT_OK(c.value()->Deploy(m.weights, &r2));
  EXPECT_GT(r1.uploaded_bytes[0], 0);
  EXPECT_GT(r1.uploaded_bytes[1], 0);
  EXPECT_EQ(r2.uploaded_bytes[0] + r2.uploaded_bytes[1], 0);
  EXPECT_TRUE(r2.reused[0] && r2.reused[1]);
  const Tensor x = RandomInput(p.input_shape, kInputSeed);
  Tensor got;
  ASSERT_OK(c.value()->Run(x, &got, nullptr, 0));
  EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, x)), 1e-4);
}

// A 3-device pipeline whose workers delay every send by `latency`, so a
// request is in flight long enough to kill a worker in the middle of it.
struct KillFixture {
  ModelRef ref;
  Model m;
  Plan p;
  ProcessCluster pc{3, {"--link-latency", "400ms"}};
  Tensor x, want;
  KillFixture() {
    ref.spec = "cifarnet";
    m = LoadRef(ref);
    p = MakeTestPlan(m, ref, "pipeline", 3);
    x = RandomInput(p.input_shape, kInputSeed);
    want = RunWholeOrFail(m, x);
  }
  // A coordinator with `timeout_ms` over the three workers, deployed, that
  // has answered a first request.
  void Start(int64_t timeout_ms) {
    ASSERT_TRUE(pc.ok(3));
    CoordinatorOptions co;
    co.timeout_ms = timeout_ms;
    auto made = Coordinator::Create(p, pc.cluster, co);
    ASSERT_TRUE(made.ok());
    c = std::move(made).value();
    ASSERT_OK(c->Deploy(m.weights, nullptr));
    Tensor got;
    ASSERT_OK(c->Run(x, &got, nullptr, 0));
  }
  // Restarts the killed dev1 on its port and redeploys (`r`: what that
  // uploaded): the next request succeeds.
  void RestartDev1AndRun(DeployReport* r) {
    ASSERT_TRUE(pc.workers[1]->Restart());
    ASSERT_OK(c->Deploy(m.weights, r));
    Tensor got;
    Status s = c->Run(x, &got, nullptr, 2);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_LE(MaxRelDiff(got, want), 1e-4);
  }
  // Sends `signal` to dev1 `after` into a request: the request must fail
  // naming dev1 within `within_s` seconds of the signal (`took`: how long
  // it did take).
  void SignalDev1During(std::chrono::milliseconds after, int signal,
                        double within_s, double* took_s = nullptr) {
    Status s;
    std::thread req([&] {
      Tensor got;
      s = c->Run(x, &got, nullptr, 1);
    });
    std::this_thread::sleep_for(after);
    const auto t0 = Clock::now();
    if (signal == SIGKILL) {
      pc.workers[1]->Kill9();
    } else {
      kill(pc.workers[1]->pid(), signal);
    }
    req.join();
    const double took =
        std::chrono::duration<double>(Clock::now() - t0).count();
    if (took_s != nullptr) *took_s = took;
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("dev1 (" + pc.workers[1]->address() + ")"),
              std::string::npos)
        << s.message();
    EXPECT_LT(took, within_s) << s.message();
  }
  std::unique_ptr<Coordinator> c;  // made by Start
};

// The requests' deadline: far longer than the failure detection asserted
// (kFailFastS), so that a test passing cannot be the deadline's doing.
constexpr int64_t kLongDeadlineMs = 60000;
// Failure detection is at once for a closed connection, about a second for
// a frozen device (DeviceProbe); these bounds are generous for a loaded test
// machine.
constexpr double kFailFastS = 5.0;
constexpr double kFrozenFailS = 3.0;

TEST(WorkerProcesses, WorkerKilledBeforeItsInputArrivesIsNamed) {
  KillFixture f;
  ASSERT_NO_FATAL_FAILURE(f.Start(kLongDeadlineMs));
  // dev0 computes, then holds its output 400 ms (the link): dev1 dies first.
  ASSERT_NO_FATAL_FAILURE(
      f.SignalDev1During(std::chrono::milliseconds(150), SIGKILL, kFailFastS));
  EXPECT_TRUE(f.pc.workers[0]->Alive());
  EXPECT_TRUE(f.pc.workers[2]->Alive());
  DeployReport r;
  ASSERT_NO_FATAL_FAILURE(f.RestartDev1AndRun(&r));
  EXPECT_FALSE(r.reused[1]);
  EXPECT_TRUE(r.reused[0] && r.reused[2]);
}

TEST(WorkerProcesses, WorkerKilledHoldingARequestFailsFastNamingIt) {
  KillFixture f;
  ASSERT_NO_FATAL_FAILURE(f.Start(kLongDeadlineMs));
  // dev1 has its input at ~400 ms and holds its own output until ~800 ms:
  // killed at 600 ms, no worker is left to report; the coordinator's
  // connection to dev1 drops and fails the request.
  ASSERT_NO_FATAL_FAILURE(
      f.SignalDev1During(std::chrono::milliseconds(600), SIGKILL, kFailFastS));
  ASSERT_NO_FATAL_FAILURE(f.RestartDev1AndRun(nullptr));
}

TEST(WorkerProcesses, WorkerFrozenHoldingARequestFailsFastNamingIt) {
  KillFixture f;
  ASSERT_NO_FATAL_FAILURE(f.Start(kLongDeadlineMs));
  // A stopped process keeps its connections open, as a host that vanished
  // from the network does: the coordinator's Health calls while the
  // request waits go unanswered (DeviceProbe), before keepalive gives up.
  double took = 0;
  f.SignalDev1During(std::chrono::milliseconds(600), SIGSTOP, kFrozenFailS,
                     &took);
  kill(f.pc.workers[1]->pid(), SIGCONT);
  if (HasFatalFailure()) return;
  RecordProperty("frozen_detected_ms", static_cast<int>(took * 1000));
  std::cout << "dev1 frozen: its request failed " << took
            << " s after SIGSTOP\n";
  // Thawed, it serves again without a redeploy.
  Tensor got;
  Status s = f.c->Run(f.x, &got, nullptr, 2);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LE(MaxRelDiff(got, f.want), 1e-4);
}

// `shoal bench` with a worker killed after a few requests: it stops at the
// first failure, well before the deadline, prints the report of the
// requests done and names the device; exit 1.
TEST(WorkerProcesses, BenchStopsAtAKilledWorkerWithAPartialReport) {
  ProcessCluster pc(3, {"--link-latency", "100ms"});
  ASSERT_TRUE(pc.ok(3));
  const std::string dir =
      ::testing::TempDir() + "/bench-kill-" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  std::string yaml = "devices:\n";
  for (const auto& d : pc.cluster.devices) {
    yaml += "  - {name: " + d.name + ", address: " + d.address + "}\n";
  }
  const std::string file = dir + "/cluster.yaml", plan = dir + "/plan.json";
  std::ofstream(file) << yaml;
  std::string out;
  ASSERT_EQ(testing::Shell(ShoalBinary() + " plan cifarnet --cluster " + file +
                               " --strategy pipeline -o " + plan,
                           &out),
            0)
      << out;
  const std::string log = dir + "/bench.txt";
  const pid_t bench = testing::SpawnLogged(
      {ShoalBinary(), "bench", "--plan", plan, "--cluster", file, "--requests",
       "1000", "--timeout-ms", std::to_string(kLongDeadlineMs)},
      log);
  ASSERT_GT(bench, 0);
  // About 200 ms a request (two 100 ms links): some are done by then.
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const auto t0 = Clock::now();
  pc.workers[1]->Kill9();
  int status = 0;
  ASSERT_EQ(waitpid(bench, &status, 0), bench);
  const double took = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string text = ReadFile(log);
  EXPECT_LT(took, kFailFastS) << text;
  ASSERT_TRUE(WIFEXITED(status)) << text;
  EXPECT_EQ(WEXITSTATUS(status), 1) << text;
  const std::regex done("bench .*: ([0-9]+)/1000 requests ok");
  std::smatch mt;
  ASSERT_TRUE(std::regex_search(text, mt, done)) << text;
  EXPECT_GT(std::stoi(mt[1]), 0) << text;
  EXPECT_LT(std::stoi(mt[1]), 1000) << text;
  EXPECT_NE(text.find("latency ms: min"), std::string::npos) << text;
  EXPECT_TRUE(std::regex_search(text, std::regex("dev1 +no statistics")))
      << text;
  EXPECT_NE(text.find("device dev1 (" + pc.workers[1]->address() + ")"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("requests not sent"), std::string::npos) << text;
  if (!HasFailure()) std::filesystem::remove_all(dir);
}

// gRPC would share a port between two servers (SO_REUSEPORT); shoal turns
// that off, so a second worker on a taken port fails to start, saying so.
TEST(WorkerProcesses, SecondWorkerOnATakenPortRefusesToStart) {
  auto w = WorkerProcess::Start("first", 0);
  ASSERT_TRUE(w);
  std::string out;
  const int rc = testing::Shell(
      "timeout 20 " + ShoalBinary() + " worker --listen " + w->address() +
          " --name second --cache-dir " + ::testing::TempDir() +
          "/second-worker-" + std::to_string(getpid()),
      &out);
  EXPECT_EQ(rc, 1) << out;
  EXPECT_NE(out.find("worker second cannot listen on " + w->address()),
            std::string::npos)
      << out;
  EXPECT_TRUE(w->Alive());
}

TEST(WorkerProcesses, GarbageAndOversizedMessagesLeaveTheWorkerUp) {
  auto w = WorkerProcess::Start("victim", 0, {"--max-message", "2MiB"});
  ASSERT_TRUE(w);
  // Raw garbage on the TCP port.
  ASSERT_NO_FATAL_FAILURE(testing::SendGarbage(w->port(), 1 << 20, 5));
  auto stub = rpc::Worker::NewStub(MakeChannel(w->address(), 1 << 30));
  {  // over the worker's 2 MiB message limit
    rpc::TensorMessage m;
    m.set_protocol(kProtocolVersion);
    m.mutable_data()->assign(8 << 20, 'x');
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(5000));
    rpc::Ack ack;
    grpc::Status s = stub->Send(&ctx, m, &ack);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
        << s.error_message();
  }
  {  // well-formed, nonsense content
    rpc::TensorMessage m;
    m.set_protocol(kProtocolVersion);
    m.set_transfer(-5);
    m.add_shape(-1);
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(5000));
    rpc::Ack ack;
    EXPECT_FALSE(stub->Send(&ctx, m, &ack).ok());
  }
  ASSERT_TRUE(w->Alive()) << w->log();
  // Still serves a real deployment and request.
  ModelRef ref;
  ref.spec = "lenet5";
  const Model m = LoadRef(ref);
  Plan p = MakeTestPlan(m, ref, "pipeline", 1);
  Cluster cl;
  cl.devices.push_back(DeviceSpec{"dev0", w->address()});
  auto c = Coordinator::Create(p, cl, {});
  ASSERT_TRUE(c.ok());
  Status d = c.value()->Deploy(m.weights, nullptr);
  ASSERT_TRUE(d.ok()) << d.message();
  const Tensor x = RandomInput(p.input_shape, kInputSeed);
  Tensor got;
  ASSERT_OK(c.value()->Run(x, &got, nullptr, 0));
  EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, x)), 1e-4);
}

// VmRSS or VmHWM of a process, in bytes (0 if unreadable).
int64_t ProcStatusBytes(pid_t pid, const std::string& key) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind(key + ":", 0) == 0) {
      return std::stoll(line.substr(key.size() + 1)) * 1024;
    }
  }
  return 0;
}

// A device holds each weight once: the worker's memory after deploying and
// running AlexNet whole (233 MiB of weights) is its weights, activations
// and a constant, and its peak is that and one weight more; the cache that
// makes a redeploy free is on disk. Generous margins here (the benchmark,
// bench/worker_memory.sh, holds the tight figures): before the cache moved
// to disk the worker sat at 2.2x its weights.
TEST(WorkerProcesses, WorkerHoldsEachWeightOnce) {
  auto w = WorkerProcess::Start("mem", 0, {"--threads", "1"});
  ASSERT_TRUE(w);
  ModelRef ref;
  ref.spec = "alexnet";
  const Model m = LoadRef(ref);
  Plan p = MakeTestPlan(m, ref, "pipeline", 1);
  Cluster cl;
  cl.devices.push_back(DeviceSpec{"mem", w->address()});
  auto c = Coordinator::Create(p, cl, {});
  ASSERT_TRUE(c.ok());
  DeployReport r;
  ASSERT_OK(c.value()->Deploy(m.weights, &r));
  const Tensor x = RandomInput(p.input_shape, kInputSeed);
  Tensor got;
  ASSERT_OK(c.value()->Run(x, &got, nullptr, 0));
  EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, x)), 1e-4);
  const int64_t weights = r.weight_bytes[0];
  const int64_t largest = 144 << 20;  // classifier.1's 9216 x 4096
  const int64_t rss = ProcStatusBytes(w->pid(), "VmRSS");
  const int64_t hwm = ProcStatusBytes(w->pid(), "VmHWM");
  ASSERT_GT(weights, 200 << 20);
  EXPECT_LT(rss, weights + (150 << 20)) << "at rest";
  EXPECT_LT(hwm, weights + largest + (200 << 20)) << "at the peak";
}

// The cache is on disk: a restarted worker (nothing in memory) gets a
// redeploy of the same weights without an upload; a blob whose file was
// damaged is found by its hash and uploaded again, never used.
TEST(WorkerProcesses, CachedWeightsSurviveARestartAndCorruptOnesAreSentAgain) {
  auto w = WorkerProcess::Start("cache", 0, {});
  ASSERT_TRUE(w);
  ModelRef ref;
  ref.spec = "cifarnet";
  const Model m = LoadRef(ref);
  Plan p = MakeTestPlan(m, ref, "pipeline", 1);
  Cluster cl;
  cl.devices.push_back(DeviceSpec{"cache", w->address()});
  const Tensor x = RandomInput(p.input_shape, kInputSeed);
  const Tensor want = RunWholeOrFail(m, x);
  auto deploy_and_run = [&](DeployReport* r) {
    auto c = Coordinator::Create(p, cl, {});
    ASSERT_TRUE(c.ok());
    ASSERT_OK(c.value()->Deploy(m.weights, r));
    Tensor got;
    ASSERT_OK(c.value()->Run(x, &got, nullptr, 0));
    EXPECT_LE(MaxRelDiff(got, want), 1e-4);
  };
  DeployReport first, again, repaired;
  ASSERT_NO_FATAL_FAILURE(deploy_and_run(&first));
  EXPECT_EQ(first.uploaded_bytes[0], first.weight_bytes[0]);
  ASSERT_TRUE(w->Restart());
  ASSERT_NO_FATAL_FAILURE(deploy_and_run(&again));
  EXPECT_FALSE(again.reused[0]) << "a restarted worker deploys anew";
  EXPECT_EQ(again.uploaded_bytes[0], 0) << "but reads its weights from disk";
  // Damage the largest blob in place, worker stopped.
  ASSERT_TRUE(w->Restart());
  std::string victim;
  int64_t size = 0;
  for (const auto& e : std::filesystem::directory_iterator(w->cache_dir())) {
    if (static_cast<int64_t>(e.file_size()) > size) {
      size = e.file_size();
      victim = e.path();
    }
  }
  ASSERT_FALSE(victim.empty());
  {
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(size / 2);
    const char b = static_cast<char>(f.get());
    f.seekp(size / 2);
    f.put(static_cast<char>(b ^ 0x5a));
  }
  ASSERT_NO_FATAL_FAILURE(deploy_and_run(&repaired));
  EXPECT_EQ(repaired.uploaded_bytes[0], size) << "only the damaged blob";
}

// An image input travels as 8-bit pixels: every strategy's output equals
// the one-device run, and the devices receive exactly 3 bytes less for
// each input value sent to them than when the same input goes as float32.
TEST(WorkerProcesses, ImageInputTravelsAsPixels) {
  ProcessCluster pc(3);
  ASSERT_TRUE(pc.ok(3));
  ModelRef ref;
  ref.spec = "cifarnet";
  const Model m = LoadRef(ref);
  const ImageNormalization norm = DefaultNormalization(3);
  for (const std::string strategy : {"spatial", "lop", "data"}) {
    Plan p = MakeTestPlan(m, ref, strategy, 3);
    p.input_pixels = true;
    const Tensor x = RandomImage(p.input_shape, 11, norm);
    const Tensor want = RunWholeOrFail(m, x);
    int64_t received[2] = {0, 0};
    for (int pixels = 0; pixels < 2; ++pixels) {
      CoordinatorOptions co;
      if (pixels) co.pixels = norm;
      auto c = Coordinator::Create(p, pc.cluster, co);
      ASSERT_TRUE(c.ok()) << c.status().message();
      ASSERT_OK(c.value()->Deploy(m.weights, nullptr));
      ASSERT_TRUE(c.value()->Stats(/*reset=*/true).ok());
      Tensor got;
      // Request 1: `data` deals it to a device that is not the input's.
      ASSERT_OK(c.value()->Run(x, &got, nullptr, 1));
      EXPECT_LE(MaxRelDiff(got, want), 1e-4) << strategy;
      auto st = c.value()->Stats(false);
      ASSERT_TRUE(st.ok());
      for (const auto& d : *st) received[pixels] += d.bytes_received;
    }
    int64_t input_values = 0;  // sent to a device other than the input's
    for (const auto& x : p.transfers) {
      if (x.src.task == kModelInput && x.dst.task >= 0 &&
          p.DeviceOf(x.dst.task, 1) != p.input_device) {
        input_values += x.src.region.elements();
      }
    }
    EXPECT_GT(input_values, 0) << strategy;
    EXPECT_EQ(received[0] - received[1], 3 * input_values) << strategy;
  }
}

TEST(WorkerProcesses, TooSmallMemoryRefusesWithTheNumbers) {
  auto w = WorkerProcess::Start("small", 0, {"--memory", "200KB"});
  ASSERT_TRUE(w);
  ModelRef ref;
  ref.spec = "cifarnet";
  const Model m = LoadRef(ref);
  Plan p = MakeTestPlan(m, ref, "pipeline", 1);
  Cluster cl;
  cl.devices.push_back(DeviceSpec{"small", w->address()});
  auto c = Coordinator::Create(p, cl, {});
  ASSERT_TRUE(c.ok());
  Status s = c.value()->Deploy(m.weights, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("small"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("refuses the deployment"), std::string::npos)
      << s.message();
  // The needed and the budgeted sizes: "needs ... 2.3 MiB ... budget is
  // 0.2 MiB".
  EXPECT_TRUE(std::regex_search(
      s.message(), std::regex("needs .*[0-9.]+ MiB.*budget is 0\\.2 MiB")))
      << s.message();
  // Nothing was uploaded to a device that could not hold it.
  rpc::HealthReply hr;
  ASSERT_TRUE(testing::Health(w->address(), &hr).ok());
  EXPECT_EQ(hr.deployment(), "");
  EXPECT_TRUE(w->Alive());
}

// `shoal plan MODEL --strategy lcp --branches K` and `shoal run --cluster
// --check` on workers that `shoal cluster up` started.
TEST(WorkerProcesses, PlanBranchesOnTheFlyAndRunOnAClusterUp) {
  const std::string dir =
      ::testing::TempDir() + "/lcp-cli-" + std::to_string(getpid());
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  std::string yaml = "devices:\n";
  for (int i = 0; i < 3; ++i) {
    auto port = FreeLoopbackPort();
    ASSERT_TRUE(port.ok());
    yaml += "  - {name: d" + std::to_string(i) +
            ", address: 127.0.0.1:" + std::to_string(*port) + "}\n";
  }
  const std::string file = dir + "/cluster.yaml";
  std::ofstream(file) << yaml;
  const std::string shoal = ShoalBinary();
  const std::string plan = dir + "/lcp.json";
  auto sh = [&](const std::string& cmd) {
    return system((cmd + " > " + dir + "/out.txt 2>&1").c_str());
  };
  ASSERT_EQ(sh(shoal + " plan cifarnet --cluster " + file +
               " --strategy lcp --branches 4 -o " + plan),
            0)
      << ReadFile(dir + "/out.txt");
  EXPECT_NE(ReadFile(plan).find("\"lcp_branches\": 4"), std::string::npos);
  ASSERT_EQ(sh(shoal + " run --plan " + plan + " --local --check"), 0)
      << ReadFile(dir + "/out.txt");
  ASSERT_EQ(sh(shoal + " cluster up " + file), 0) << ReadFile(dir + "/out.txt");
  const int run = sh(shoal + " run --plan " + plan + " --cluster " + file +
                     " --check --timeout-ms 20000");
  const std::string out = ReadFile(dir + "/out.txt");
  // bench and simulate list each task under its device, the same tasks.
  const int bench = sh(shoal + " bench --plan " + plan + " --cluster " + file +
                       " --requests 3 --json");
  const std::string bench_out = ReadFile(dir + "/out.txt");
  const int sim = sh(shoal + " simulate --plan " + plan + " --cluster " + file +
                     " --requests 3 --json");
  const std::string sim_out = ReadFile(dir + "/out.txt");
  EXPECT_EQ(sh(shoal + " cluster down --purge " + file), 0);
  EXPECT_EQ(run, 0) << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
  ASSERT_EQ(bench, 0) << bench_out;
  ASSERT_EQ(sim, 0) << sim_out;
  auto tasks_by_device = [](const std::string& text) {
    const auto j = nlohmann::json::parse(text);
    std::map<std::string, std::vector<std::string>> by;
    for (const auto& d : j["devices"]) {
      double sum = 0;
      for (const auto& t : d["tasks"]) {
        EXPECT_EQ(t["runs"].get<int>(), 3) << t.dump();
        EXPECT_GE(t["compute_ms_median"].get<double>(), 0);
        sum += t["compute_ms_median"].get<double>();
        by[d["name"]].push_back(t["name"]);
      }
      EXPECT_NEAR(sum, d["compute_ms_median"].get<double>(), 1e-6);
    }
    return by;
  };
  const auto measured = tasks_by_device(bench_out);
  EXPECT_EQ(measured, tasks_by_device(sim_out));
  size_t n = 0;
  for (const auto& [d, names] : measured) n += names.size();
  // Every task of the plan ran once per request, each on one device.
  EXPECT_EQ(n, nlohmann::json::parse(ReadFile(plan))["tasks"].size())
      << bench_out;
}

}  // namespace
}  // namespace shoal
