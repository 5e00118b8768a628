// The distributed runtime with real `shoal worker` processes on 127.0.0.1
// (the binary this build made), each on a port the kernel picked: every
// strategy equals the one-device run, deploy caching, a worker killed with
// SIGKILL mid-request (the request fails within its deadline naming the
// device; after a restart the next request succeeds), garbage and oversized
// messages leave a worker up, a too-small --memory refuses with the numbers,
// and `shoal plan --branches` + `shoal run --cluster --check` end to end.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <random>
#include <regex>
#include <thread>

#include "cli/plan_common.h"
#include "engine/executor.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "runtime/coordinator.h"
#include "runtime/emulated_cluster.h"
#include "runtime/wire.h"

namespace shoal {
namespace {

#define ASSERT_OK(expr)                   \
  do {                                    \
    const Status s_ = (expr);             \
    ASSERT_TRUE(s_.ok()) << s_.message(); \
  } while (0)

using Clock = std::chrono::steady_clock;

std::string ShoalBinary() {
  const char* env = std::getenv("SHOAL_BINARY");
  return env != nullptr ? env : SHOAL_BINARY;
}

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

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
                  << " did not start: " << ReadAll(w->log_);
    return nullptr;
  }
  ~WorkerProcess() { Stop(); }

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
  std::string log() const { return ReadAll(log_); }

 private:
  WorkerProcess() = default;

  bool Spawn(int port) {
    // A fresh, empty log: the port must not be read from an older one.
    static std::atomic<int> counter{0};
    log_ = ::testing::TempDir() + "/worker-" + name_ + "-" +
           std::to_string(getpid()) + "-" + std::to_string(counter++) + ".log";
    std::ofstream(log_, std::ios::trunc).flush();
    std::vector<std::string> args = {
        ShoalBinary(), "worker",
        "--listen",    "127.0.0.1:" + std::to_string(port),
        "--name",      name_};
    args.insert(args.end(), extra_.begin(), extra_.end());
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) {
      // A crashed test must not leave workers behind.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(1);
      int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(argv[0], argv.data());
      _exit(127);
    }
    pid_ = pid;
    const std::regex re("listening on port ([0-9]+)");
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      std::smatch mt;
      const std::string text = ReadAll(log_);
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

  std::string name_, log_;
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

Tensor RandomInput(const Shape& s) {
  Tensor t(s);
  std::mt19937_64 rng(11);
  std::normal_distribution<float> nd(0.f, 1.f);
  for (auto& v : t.data) v = nd(rng);
  return t;
}

Tensor RunWhole(const Model& m, const Tensor& x) {
  auto ex = Executor::Create(m.graph, m.weights, ExecutorOptions{});
  EXPECT_TRUE(ex.ok());
  std::vector<Tensor> out;
  EXPECT_TRUE(ex.value()->Run({x}, &out).ok());
  return out[0];
}

double MaxRelDiff(const Tensor& a, const Tensor& b) {
  if (a.shape != b.shape) return 1e30;
  double scale = 0, diff = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    scale = std::max(scale, double(std::fabs(b.data[i])));
    diff = std::max(diff, double(std::fabs(a.data[i] - b.data[i])));
  }
  return scale > 0 ? diff / scale : diff;
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
  for (const std::string model : {"lenet5", "cifarnet"}) {
    for (const auto& strategy : StrategyNames()) {
      ModelRef ref;
      ref.spec = model;
      // LCP runs the branched model; it must equal that model run whole.
      if (strategy == "lcp") ref.lcp_branches = 3;
      const Model m = LoadRef(ref);
      const Tensor x =
          RandomInput(m.graph.FindTensor(m.graph.inputs[0])->shape);
      const Tensor want = RunWhole(m, x);
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
  }
  for (const auto& s : StrategyNames()) {
    EXPECT_GT(ran[s], 0) << s << " ran on no model";
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
  const Tensor x = RandomInput(p.input_shape);
  Tensor got;
  ASSERT_OK(c.value()->Run(x, &got, nullptr, 0));
  EXPECT_LE(MaxRelDiff(got, RunWhole(m, x)), 1e-4);
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
    x = RandomInput(p.input_shape);
    want = RunWhole(m, x);
  }
};

// Kills dev1 `after` into a request; returns the request's status and how
// long it took.
Status RequestKillingDev1(KillFixture& f, Coordinator* c, int64_t seq,
                          std::chrono::milliseconds after, double* seconds) {
  Status s;
  const auto t0 = Clock::now();
  std::thread req([&] {
    Tensor got;
    s = c->Run(f.x, &got, nullptr, seq);
  });
  std::this_thread::sleep_for(after);
  f.pc.workers[1]->Kill9();
  req.join();
  *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

TEST(WorkerProcesses, WorkerKilledBeforeItsInputArrivesIsNamed) {
  KillFixture f;
  ASSERT_TRUE(f.pc.ok(3));
  CoordinatorOptions co;
  co.timeout_ms = 6000;
  auto c = Coordinator::Create(f.p, f.pc.cluster, co);
  ASSERT_TRUE(c.ok());
  ASSERT_OK(c.value()->Deploy(f.m.weights, nullptr));
  Tensor got;
  ASSERT_OK(c.value()->Run(f.x, &got, nullptr, 0));
  // dev0 computes, then holds its output 400 ms (the link): dev1 dies first.
  double took = 0;
  Status s = RequestKillingDev1(f, c.value().get(), 1,
                                std::chrono::milliseconds(150), &took);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dev1"), std::string::npos) << s.message();
  EXPECT_LT(took, 6.0 + 1.0) << s.message();
  EXPECT_TRUE(f.pc.workers[0]->Alive());
  EXPECT_TRUE(f.pc.workers[2]->Alive());
  // Restarted on its port, redeployed: the next request succeeds.
  ASSERT_TRUE(f.pc.workers[1]->Restart());
  DeployReport r;
  ASSERT_OK(c.value()->Deploy(f.m.weights, &r));
  EXPECT_FALSE(r.reused[1]);
  EXPECT_TRUE(r.reused[0] && r.reused[2]);
  Status s2 = c.value()->Run(f.x, &got, nullptr, 2);
  ASSERT_TRUE(s2.ok()) << s2.message();
  EXPECT_LE(MaxRelDiff(got, f.want), 1e-4);
}

TEST(WorkerProcesses, WorkerKilledHoldingARequestTimesOutNamingIt) {
  KillFixture f;
  ASSERT_TRUE(f.pc.ok(3));
  CoordinatorOptions co;
  co.timeout_ms = 4000;
  auto c = Coordinator::Create(f.p, f.pc.cluster, co);
  ASSERT_TRUE(c.ok());
  ASSERT_OK(c.value()->Deploy(f.m.weights, nullptr));
  Tensor got;
  ASSERT_OK(c.value()->Run(f.x, &got, nullptr, 0));
  // dev1 has its input at ~400 ms and holds its own output until ~800 ms:
  // killed at 600 ms, nobody is left to report, so the deadline does.
  double took = 0;
  Status s = RequestKillingDev1(f, c.value().get(), 1,
                                std::chrono::milliseconds(600), &took);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dev1"), std::string::npos) << s.message();
  EXPECT_LT(took, 4.0 + 2.5) << s.message();  // + the health checks
  ASSERT_TRUE(f.pc.workers[1]->Restart());
  ASSERT_OK(c.value()->Deploy(f.m.weights, nullptr));
  Status s2 = c.value()->Run(f.x, &got, nullptr, 2);
  ASSERT_TRUE(s2.ok()) << s2.message();
  EXPECT_LE(MaxRelDiff(got, f.want), 1e-4);
}

TEST(WorkerProcesses, GarbageAndOversizedMessagesLeaveTheWorkerUp) {
  auto w = WorkerProcess::Start("victim", 0, {"--max-message", "2MiB"});
  ASSERT_TRUE(w);
  {  // raw garbage on the TCP port
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(w->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    std::mt19937 rng(5);
    std::string junk(1 << 20, '\0');
    for (auto& ch : junk) ch = static_cast<char>(rng());
    (void)!write(fd, junk.data(), junk.size());
    close(fd);
  }
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
  const Tensor x = RandomInput(p.input_shape);
  Tensor got;
  ASSERT_OK(c.value()->Run(x, &got, nullptr, 0));
  EXPECT_LE(MaxRelDiff(got, RunWhole(m, x)), 1e-4);
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
  auto stub = rpc::Worker::NewStub(MakeChannel(w->address(), 1 << 20));
  rpc::HealthRequest hq;
  hq.set_protocol(kProtocolVersion);
  rpc::HealthReply hr;
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(3000));
  ASSERT_TRUE(stub->Health(&ctx, hq, &hr).ok());
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
      << ReadAll(dir + "/out.txt");
  EXPECT_NE(ReadAll(plan).find("\"lcp_branches\": 4"), std::string::npos);
  ASSERT_EQ(sh(shoal + " run --plan " + plan + " --local --check"), 0)
      << ReadAll(dir + "/out.txt");
  ASSERT_EQ(sh(shoal + " cluster up " + file), 0) << ReadAll(dir + "/out.txt");
  const int run = sh(shoal + " run --plan " + plan + " --cluster " + file +
                     " --check --timeout-ms 20000");
  const std::string out = ReadAll(dir + "/out.txt");
  EXPECT_EQ(sh(shoal + " cluster down " + file), 0);
  EXPECT_EQ(run, 0) << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
}

}  // namespace
}  // namespace shoal
