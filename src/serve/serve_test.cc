// shoal serve in this process over real gRPC: workers on free ports, the
// server, and clients sending a steady stream. Switching plans mid-stream
// answers every request exactly once and correctly; a worker that dies is
// planned around and the requests it held are retried once; a device added
// to the cluster file joins on Reload; bad requests are refused, not retried;
// declined re-plans and failed requests reach the dashboard with reasons.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/load_model.h"
#include "runtime/runtime_test_util.h"
#include "serve/client.h"
#include "serve/generation.h"
#include "serve/serve_log.h"
#include "serve/server.h"

namespace shoal {
namespace {

namespace fs = std::filesystem;

constexpr int kInputs = 4;

// lenet5 with kInputs seeded inputs and its one-device outputs for them.
struct Fixture {
  Model model;
  std::vector<Tensor> inputs, want;
  Fixture() {
    LoadOptions lo;
    lo.with_weights = true;
    lo.fuse_batchnorm = true;
    model = LoadModel("lenet5", lo).value();
    const Shape s = model.graph.tensors.at(model.graph.inputs[0]).shape;
    for (int i = 0; i < kInputs; ++i) {
      inputs.push_back(RandomInput(s, 100 + i));
      want.push_back(testing::RunWholeOrFail(model, inputs.back()));
    }
  }
};

// Workers in this process and a cluster file, in a fresh directory, that
// lists some of them.
struct LocalWorkers : testing::LocalWorkers {
  std::string dir, file;
  explicit LocalWorkers(int n) : testing::LocalWorkers(n) { MakeDir(); }
  // Each worker with `base`'s options but its name and port.
  LocalWorkers(int n, const WorkerOptions& base)
      : testing::LocalWorkers(n, base) {
    MakeDir();
  }
  void MakeDir() {
    dir = fs::temp_directory_path() /
          ("shoal-serve-test-" + std::to_string(getpid()) + "-" +
           std::to_string(counter++));
    fs::create_directories(dir);
    file = dir + "/cluster.yaml";
  }
  ~LocalWorkers() {
    workers.clear();
    fs::remove_all(dir);
  }
  // The cluster file lists the first `n` workers.
  void Write(int n) {
    std::ofstream f(file);
    f << "devices:\n";
    for (int i = 0; i < n; ++i) {
      const DeviceSpec& d = cluster.devices[i];
      f << "  - {name: " << d.name << ", address: " << d.address << "}\n";
    }
  }
  static inline int counter = 0;
};

ServeOptions Options(const std::string& file) {
  ServeOptions o;
  o.cluster_file = file;
  o.model.spec = "lenet5";
  o.listen = "127.0.0.1:0";
  o.strategy = "pipeline";
  o.monitor_interval_s = 0.2;
  o.rebalance = false;  // tests re-plan on purpose; speed checks are slow tests
  o.timeout_ms = 10000;
  o.log_every_s = 1000;
  return o;
}

void WaitFor(const std::function<bool()>& cond, int ms) {
  for (int i = 0; i < ms / 20 && !cond(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Clients sending requests until stopped; every answer is checked.
struct Stream {
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0}, ok{0}, wrong{0}, retried{0};
  std::mutex mu;
  std::vector<std::string> errors;
  std::map<int64_t, int> by_generation;
  std::vector<std::thread> threads;
  Stream(const Fixture& f, int port, int clients) {
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([this, &f, port, c] {
        ServeClient client("127.0.0.1:" + std::to_string(port));
        for (int i = 0; !stop; ++i) {
          const int k = (c + i) % kInputs;
          sent++;
          auto r = client.Infer(f.inputs[k], 10000);
          std::lock_guard<std::mutex> lock(mu);
          if (!r.ok()) {
            errors.push_back(r.status().message());
            continue;
          }
          ok++;
          by_generation[r->generation]++;
          retried += r->attempts > 1;
          if (MaxRelDiff(r->output, f.want[k]) > 1e-4) wrong++;
        }
      });
    }
  }
  // Waits (10 s at most) until `n` more requests have been answered.
  void WaitForMore(int n) {
    const int before = ok;
    WaitFor([&] { return ok >= before + n; }, 10000);
  }
  void Stop() {
    stop = true;
    for (auto& t : threads) t.join();
    threads.clear();
  }
  ~Stream() { Stop(); }
};

// The server on `lw`'s cluster file, or null (the test has failed).
std::unique_ptr<Server> StartServer(const LocalWorkers& lw) {
  auto server = Server::Start(Options(lw.file));
  EXPECT_TRUE(server.ok()) << server.status().message();
  return server.ok() ? std::move(server).value() : nullptr;
}

// Every request the stream sent was answered exactly once, correctly.
void ExpectEachAnsweredOnce(const Stream& stream,
                            const rpc::ServeStatusReply& snap) {
  EXPECT_TRUE(stream.errors.empty()) << stream.errors[0];
  EXPECT_EQ(stream.ok, stream.sent);
  EXPECT_EQ(stream.wrong, 0);
  EXPECT_EQ(snap.answered(), stream.sent);
  EXPECT_EQ(snap.failed(), 0);
}

TEST(Serve, SwitchingPlansMidStreamAnswersEveryRequestOnce) {
  Fixture f;
  LocalWorkers lw(3);
  lw.Write(3);
  auto server = StartServer(lw);
  ASSERT_TRUE(server);
  Server& s = *server;
  EXPECT_EQ(s.Snapshot().generation(), 1);
  Stream stream(f, s.port(), 4);
  WaitFor([&] { return stream.ok >= 20; }, 10000);
  // Shares that move the pipeline's cuts one way, then the other.
  const std::vector<std::map<std::string, double>> speeds = {
      {{"dev0", 8}, {"dev1", 1}, {"dev2", 1}},
      {{"dev0", 1}, {"dev1", 1}, {"dev2", 8}},
      {{"dev0", 1}, {"dev1", 8}, {"dev2", 1}}};
  for (const auto& sp : speeds) {
    Status st = s.Rebalance(sp, "test: new speeds");
    ASSERT_TRUE(st.ok()) << st.message();
    stream.WaitForMore(20);
  }
  stream.Stop();
  const auto snap = s.Snapshot();
  EXPECT_EQ(snap.generation(), 4) << "a Rebalance gave the same plan";
  ASSERT_EQ(snap.replans_size(), 4);  // start + 3
  EXPECT_EQ(snap.replans(1).new_shares(0), 8);
  EXPECT_EQ(snap.replans(1).old_shares(0), 1);
  ExpectEachAnsweredOnce(stream, snap);
  EXPECT_EQ(stream.retried, 0);
  EXPECT_EQ(snap.accepted(), stream.sent);
  EXPECT_EQ(snap.in_flight(), 0);
  EXPECT_GE(stream.by_generation.size(), 3u);
}

// A server that re-plans for weeks lists the latest re-plans only, each
// with its switch time, and still counts them all in its generation.
TEST(Serve, StatusListsTheLatestReplans) {
  Fixture f;
  LocalWorkers lw(2);
  lw.Write(2);
  ServeOptions o = Options(lw.file);
  o.replans_kept = 4;
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();
  Server& s = **server;
  const std::vector<std::map<std::string, double>> speeds = {
      {{"dev0", 8}, {"dev1", 1}}, {{"dev0", 1}, {"dev1", 8}}};
  const int made = o.replans_kept + 3;
  for (int i = 0; i < made; ++i) {
    Status st =
        s.Rebalance(speeds[i % 2], "test: re-plan " + std::to_string(i));
    ASSERT_TRUE(st.ok()) << st.message();
  }
  const auto snap = s.Snapshot();
  ASSERT_EQ(snap.generation(), 1 + made) << "a Rebalance gave the same plan";
  ASSERT_EQ(snap.replans_size(), o.replans_kept);
  for (int i = 0; i < o.replans_kept; ++i) {
    const auto& r = snap.replans(i);
    EXPECT_EQ(r.generation(), snap.generation() - o.replans_kept + 1 + i);
    EXPECT_EQ(r.reason(),
              "test: re-plan " + std::to_string(made - o.replans_kept + i));
    EXPECT_GT(r.switch_ms(), 0) << r.generation();
  }
  ServeClient client("127.0.0.1:" + std::to_string(s.port()));
  auto r = client.Infer(f.inputs[0], 10000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->generation, snap.generation());
  EXPECT_LE(MaxRelDiff(r->output, f.want[0]), 1e-4);
}

TEST(Serve, DeadWorkerIsPlannedAroundAndItsRequestsRetriedOnce) {
  Fixture f;
  LocalWorkers lw(3);
  lw.Write(3);
  auto server = StartServer(lw);
  ASSERT_TRUE(server);
  Server& s = *server;
  Stream stream(f, s.port(), 3);
  WaitFor([&] { return stream.ok >= 20; }, 10000);
  lw.workers[1].reset();  // dev1 dies
  WaitFor([&] { return s.Snapshot().generation() >= 2; }, 10000);
  stream.WaitForMore(20);
  stream.Stop();
  const auto snap = s.Snapshot();
  ASSERT_EQ(snap.generation(), 2);
  ASSERT_EQ(snap.replans_size(), 2);
  EXPECT_NE(snap.replans(1).reason().find("device dev1 left"),
            std::string::npos)
      << snap.replans(1).reason();
  ASSERT_EQ(snap.replans(1).devices_size(), 2);
  for (const auto& d : snap.replans(1).devices()) EXPECT_NE(d, "dev1");
  ExpectEachAnsweredOnce(stream, snap);
  EXPECT_EQ(snap.retried(), stream.retried);
  bool listed_down = false;
  for (const auto& d : snap.devices()) {
    listed_down |= d.name() == "dev1" && d.state() == "down";
  }
  EXPECT_TRUE(listed_down);
}

TEST(Serve, DeviceAddedToTheClusterFileJoinsOnReload) {
  Fixture f;
  LocalWorkers lw(3);
  lw.Write(2);
  auto server = StartServer(lw);
  ASSERT_TRUE(server);
  Server& s = *server;
  ASSERT_EQ(s.Snapshot().replans(0).devices_size(), 2);
  lw.Write(3);
  s.Reload();
  WaitFor([&] { return s.Snapshot().generation() >= 2; }, 10000);
  const auto snap = s.Snapshot();
  ASSERT_EQ(snap.generation(), 2);
  ASSERT_EQ(snap.replans_size(), 2);
  EXPECT_NE(snap.replans(1).reason().find("device dev2 joined"),
            std::string::npos)
      << snap.replans(1).reason();
  EXPECT_EQ(snap.replans(1).devices_size(), 3);
  ServeClient client("127.0.0.1:" + std::to_string(s.port()));
  auto r = client.Infer(f.inputs[0], 10000);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->generation, 2);
  EXPECT_LE(MaxRelDiff(r->output, f.want[0]), 1e-4);
  // Taken out of the file again: planned without it, though it answers.
  lw.Write(2);
  s.Reload();
  WaitFor([&] { return s.Snapshot().generation() >= 3; }, 10000);
  const auto last = s.Snapshot();
  ASSERT_EQ(last.replans_size(), 3);
  EXPECT_EQ(last.replans(2).devices_size(), 2);
}

TEST(Serve, BadRequestsAreRefusedAndNotRetried) {
  Fixture f;
  LocalWorkers lw(2);
  lw.Write(2);
  auto server = StartServer(lw);
  ASSERT_TRUE(server);
  ServeClient client("127.0.0.1:" + std::to_string(server->port()));
  auto r = client.Infer(Tensor(Shape{1, 3, 8, 8}), 5000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_NE(r.status().message().find("input has shape 1x3x8x8 but model "
                                      "lenet5 expects 1x1x28x28"),
            std::string::npos)
      << r.status().message();
  auto st = client.GetStatus(5000);
  ASSERT_TRUE(st.ok()) << st.status().message();
  EXPECT_EQ(st->failed(), 1);
  EXPECT_EQ(st->retried(), 0);
  EXPECT_EQ(st->input_shape_size(), 4);
}

// Past --max-in-flight a request is refused at once with the limit in its
// error, and counted; the one in flight is answered, and the next one
// after it is taken.
TEST(Serve, RequestsPastTheLimitInFlightAreRefusedNamingIt) {
  Fixture f;
  WorkerOptions slow;
  slow.link.latency_s = 1.0;  // two sends: a request takes over 2 s
  LocalWorkers lw(2, slow);
  lw.Write(2);
  ServeOptions o = Options(lw.file);
  o.max_in_flight = 1;
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();
  Server& s = **server;
  const std::string address = "127.0.0.1:" + std::to_string(s.port());
  StatusOr<InferResult> first = Unavailable("not sent");
  std::thread t(
      [&] { first = ServeClient(address).Infer(f.inputs[0], 20000); });
  WaitFor([&] { return s.Snapshot().accepted() >= 1; }, 10000);
  ServeClient client(address);
  auto second = client.Infer(f.inputs[1], 20000);
  t.join();
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), Code::kResourceExhausted);
  EXPECT_NE(second.status().message().find(
                "1 requests in flight, its limit (--max-in-flight)"),
            std::string::npos)
      << second.status().message();
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_LE(MaxRelDiff(first->output, f.want[0]), 1e-4);
  auto third = client.Infer(f.inputs[1], 20000);
  ASSERT_TRUE(third.ok()) << third.status().message();
  EXPECT_LE(MaxRelDiff(third->output, f.want[1]), 1e-4);
  const auto snap = s.Snapshot();
  EXPECT_EQ(snap.accepted(), 2);
  EXPECT_EQ(snap.answered(), 2);
  EXPECT_EQ(snap.failed(), 1);
}

// `shoal serve --objective throughput --concurrency K` plans (at the start
// and at each re-plan) by simulating K requests in flight.
TEST(Serve, ThroughputPlansAreJudgedAtTheConcurrencyAsked) {
  if (DefaultServeStrategy() != "auto") GTEST_SKIP() << "no auto strategy";
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  Model m = LoadModel("lenet5", lo).value();
  PlanOptions base;
  base.strategy = "auto";
  base.model.spec = "lenet5";
  base.objective = PlanObjective::kThroughput;
  base.ilp_time_limit_s = 2;
  const std::vector<DeviceSpec> devs = EqualCluster(3).devices;
  for (int k : {0, 5}) {
    base.concurrency = k;
    auto c = PlanForDevices(m.graph, base, devs);
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_TRUE(c->plan.prediction.has_value());
    EXPECT_EQ(c->plan.prediction->concurrency, k > 0 ? k : 3);
  }
}

// What the log alone used to say reaches the dashboard: a re-plan
// declined (the same plan) with its reason, and a failed request with its
// error; and the JSON log has both as lines that parse, with their fields.
TEST(Serve, DeclinedReplansAndFailedRequestsReachTheDashboard) {
  Fixture f;
  LocalWorkers lw(2);
  lw.Write(2);
  std::mutex mu;
  std::vector<nlohmann::json> lines;
  SetServeLogFormat(LogFormat::kJson);
  SetServeLogSink([&](const std::string& l) {
    std::lock_guard<std::mutex> lock(mu);
    // Not a throw here, in the server's threads: a line that does not
    // parse is kept as a discarded value and fails the check below.
    lines.push_back(nlohmann::json::parse(l, nullptr, false));
  });
  ServeOptions o = Options(lw.file);
  o.dashboard_listen = "127.0.0.1:0";
  auto server = Server::Start(o);
  ASSERT_TRUE(server.ok()) << server.status().message();
  Server& s = **server;
  ServeClient client("127.0.0.1:" + std::to_string(s.port()));
  ASSERT_FALSE(
      client.Infer(Tensor(Shape{1, 3, 8, 8}), 5000, "bad-client").ok());
  // The speeds it has: the planner gives the same plan, declined.
  ASSERT_TRUE(s.Rebalance({}, "asked by the test").ok());
  httplib::Client dash("127.0.0.1", s.dashboard_port());
  auto r = dash.Get("/api/status");
  s.Shutdown();
  SetServeLogSink(nullptr);
  SetServeLogFormat(LogFormat::kText);
  ASSERT_TRUE(r);
  const auto j = nlohmann::json::parse(r->body);
  ASSERT_EQ(j["replans_not_made"].size(), 1u) << j.dump();
  const auto& d = j["replans_not_made"][0];
  EXPECT_EQ(d["outcome"], "declined");
  EXPECT_EQ(d["kind"], "manual");
  EXPECT_EQ(d["reason"], "asked by the test");
  EXPECT_EQ(d["why"], "the planner gives the same plan");
  EXPECT_GT(d["unix_ms"].get<int64_t>(), 0);
  ASSERT_EQ(j["request_errors"].size(), 1u) << j.dump();
  const auto& e = j["request_errors"][0];
  EXPECT_EQ(e["client"], "bad-client");
  EXPECT_EQ(e["request"], 0);
  EXPECT_NE(e["error"].get<std::string>().find("input has shape 1x3x8x8"),
            std::string::npos)
      << e.dump();
  EXPECT_EQ(j["failed"], 1);

  bool failed_line = false, declined_line = false, listening_line = false;
  for (const auto& l : lines) {
    ASSERT_TRUE(l.is_object() && l.contains("ts") && l.contains("level") &&
                l.contains("msg"))
        << l.dump();
    const std::string msg = l["msg"];
    if (l["level"] == "ERROR" && l.value("request", -1) == 0) {
      failed_line = l["client"] == "bad-client" &&
                    msg.find(
                        "request 0 from bad-client failed: input has "
                        "shape 1x3x8x8") != std::string::npos;
    }
    if (l["level"] == "INFO" &&
        msg.rfind("no new plan (asked by the test)", 0) == 0) {
      declined_line = l["why"] == "the planner gives the same plan";
    }
    if (msg.rfind("listening on ", 0) == 0) {
      listening_line = l["port"] == s.port();
    }
  }
  EXPECT_TRUE(failed_line);
  EXPECT_TRUE(declined_line);
  EXPECT_TRUE(listening_line);
}

TEST(Serve, StartFailsWhenNoDeviceAnswers) {
  LocalWorkers lw(1);
  lw.Write(1);
  lw.workers.clear();  // the listed worker is gone
  auto server = Server::Start(Options(lw.file));
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), Code::kUnavailable);
  EXPECT_NE(
      server.status().message().find("no device of " + lw.file + " answers"),
      std::string::npos)
      << server.status().message();
}

}  // namespace
}  // namespace shoal
