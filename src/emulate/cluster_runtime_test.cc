// The distributed runtime over real gRPC on 127.0.0.1: workers in this
// process (one per device), the coordinator as a client. Every strategy
// equals the one-device run; deploy caching; the memory budget; a dead
// worker fails the request naming it, and a restarted one serves again;
// garbage and oversized messages leave a worker up.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <thread>

#include "engine/calibrate.h"
#include "graph/cost.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/builder.h"
#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "plan/graph_json.h"
#include "plan/plan_cost.h"
#include "plan/plan_json.h"
#include "runtime/coordinator.h"
#include "runtime/local_runner.h"
#include "runtime/runtime_test_util.h"
#include "runtime/wire.h"
#include "runtime/worker.h"

namespace shoal {
namespace {

// A failed status fails the test with its message (a deploy that fails
// under load says why).
#define ASSERT_OK_STATUS(expr)                             \
  do {                                                     \
    const ::shoal::Status _s = (expr);                     \
    ASSERT_TRUE(_s.ok()) << #expr << ": " << _s.message(); \
  } while (0)

Model Load(const std::string& name, std::optional<Shape> shape = {}) {
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  lo.input_shape = shape;
  auto m = LoadModel(name, lo);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(m).value();
}

using testing::LocalWorkers;
using testing::RunWholeOrFail;

constexpr uint64_t kInputSeed = 7;

// A model, its seeded input and the one-device output to compare with.
struct Oracle {
  Model m;
  Tensor x, want;
};
Oracle MakeOracle(const std::string& model) {
  Oracle o{Load(model), {}, {}};
  o.x =
      RandomInput(o.m.graph.tensors.at(o.m.graph.inputs[0]).shape, kInputSeed);
  o.want = RunWholeOrFail(o.m, o.x);
  return o;
}

// Deploys `p` on the workers once, runs requests `seqs` (replicas take
// turns by request) and checks each against the one-device output.
void ExpectDeployedRunsExact(const Plan& p, const LocalWorkers& lc,
                             const Oracle& o, std::vector<int64_t> seqs,
                             const std::string& what) {
  auto c = Coordinator::Create(p, lc.cluster, {});
  ASSERT_TRUE(c.ok()) << what << ": " << c.status().message();
  ASSERT_OK_STATUS(c.value()->Deploy(o.m.weights, nullptr));
  for (int64_t seq : seqs) {
    Tensor got;
    Status s = c.value()->Run(o.x, &got, nullptr, seq);
    ASSERT_TRUE(s.ok()) << what << ": " << s.message();
    EXPECT_LE(MaxRelDiff(got, o.want), 1e-4) << what << " request " << seq;
  }
}

Plan MakeTestPlan(const Model& m, const std::string& strategy, int n) {
  PlanOptions po;
  po.strategy = strategy;
  po.devices = testing::EqualDevices(n);
  auto p = MakePlan(m.graph, po);
  EXPECT_TRUE(p.ok()) << strategy << ": " << p.status().message();
  return std::move(p).value();
}

TEST(ClusterRuntime, EveryStrategyEqualsOneDevice) {
  LocalWorkers lc(3);
  for (const std::string model : {"lenet5", "cifarnet"}) {
    const Oracle o = MakeOracle(model);
    for (const auto& strategy : StrategyNames()) {
      PlanOptions po;
      po.strategy = strategy;
      po.devices = testing::EqualDevices(3);
      auto p = MakePlan(o.m.graph, po);
      if (!p.ok()) continue;  // a split that does not apply to this model
      // Replicas: both rounds.
      ExpectDeployedRunsExact(p.value(), lc, o, {0, 1}, model + " " + strategy);
    }
  }
}

// spatial with its fc layers split by input: each worker multiplies its
// strip of the last map by its columns of the fc weight, cut through a
// view of the weight, and the partial sums are reduced among the workers.
TEST(ClusterRuntime, SpatialFcByInputsEqualsOneDevice) {
  LocalWorkers lc(4);
  const Oracle o = MakeOracle("cifarnet");
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = testing::EqualDevices(4);
  po.spatial_fc = SpatialFc::kLip;
  auto p = MakePlan(o.m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  int viewed = 0;
  for (const auto& t : p->tasks) {
    for (const auto& w : t.weights) viewed += !w.view.empty();
  }
  EXPECT_EQ(viewed, 4);
  ExpectDeployedRunsExact(p.value(), lc, o, {0}, "spatial --spatial-fc lip");
}

// Tensors several devices read go as broadcast trees or chains, or
// scattered, in chunks that receivers forward: the output equals one
// device's, and what each worker measures it sent is what the plan's
// counts say (relays included).
TEST(ClusterRuntime, BroadcastTreesAndChainsEqualOneDevice) {
  LocalWorkers lc(6);
  const Oracle o = MakeOracle("cifarnet");
  for (const std::string strategy : {"lop", "fuse", "spatial"}) {
    int64_t relayed_by_others[4] = {0, 0, 0, 0};
    for (int fanout : {0, 1, 2, 3}) {  // 3: scattered
      PlanOptions po;
      po.strategy = strategy;
      po.devices = testing::EqualDevices(6);
      po.broadcast_fanout = fanout == 3 ? kMaxBroadcastFanout : fanout;
      po.broadcast_scatter = fanout == 3;
      auto p = MakePlan(o.m.graph, po);
      ASSERT_TRUE(p.ok()) << p.status().message();
      // Small chunks, so that every broadcast is several of them.
      p->broadcast.chunk_bytes = 1024;
      auto c = Coordinator::Create(p.value(), lc.cluster, {});
      ASSERT_TRUE(c.ok()) << c.status().message();
      ASSERT_OK_STATUS(c.value()->Deploy(o.m.weights, nullptr));
      ASSERT_TRUE(c.value()->Stats(/*reset=*/true).ok());
      Tensor got;
      Status s = c.value()->Run(o.x, &got, nullptr, 0);
      ASSERT_TRUE(s.ok()) << strategy << " " << fanout << ": " << s.message();
      EXPECT_LE(MaxRelDiff(got, o.want), 1e-4) << strategy << " " << fanout;
      auto stats = c.value()->Stats(/*reset=*/false);
      ASSERT_TRUE(stats.ok()) << stats.status().message();
      const RunStats counted = CountCommunication(p.value(), 0);
      for (int d = 1; d < 6; ++d) {  // device 0's input goes via the client
        EXPECT_EQ((*stats)[d].bytes_sent, counted.bytes_sent[d])
            << strategy << " fanout " << fanout << " device " << d;
        relayed_by_others[fanout] += counted.bytes_sent[d];
      }
    }
    if (strategy != "spatial") {  // strips: no tensor read whole by many
      EXPECT_GT(relayed_by_others[2], relayed_by_others[0]) << strategy;
      EXPECT_GT(relayed_by_others[1], relayed_by_others[2]) << strategy;
      // Scattered, the receivers relay what a chain's do, in shares.
      EXPECT_GE(relayed_by_others[3], relayed_by_others[2]) << strategy;
    }
  }
}

// Wire formats: lz4 is lossless and sends fewer bytes than the plan's raw
// count where ReLU outputs travel; f16 and bf16 round each message's
// values as the in-process run does, so the cluster agrees with `run
// --local`, and with the one-device output within the dtype's tolerance.
TEST(ClusterRuntime, WireDtypesAndCompression) {
  LocalWorkers lc(4);
  const Model m = Load("cifarnet");
  const Tensor x =
      RandomInput(m.graph.tensors.at(m.graph.inputs[0]).shape, kInputSeed);
  const Tensor want = RunWholeOrFail(m, x);
  for (const std::string strategy : {"lop", "lip", "fuse", "spatial"}) {
    for (const WireSettings w : {WireSettings{WireDtype::kF32, true},
                                 WireSettings{WireDtype::kF16, false},
                                 WireSettings{WireDtype::kBF16, true}}) {
      const std::string what =
          strategy + " " + WireDtypeName(w.dtype) + (w.lz4 ? "+lz4" : "");
      PlanOptions po;
      po.strategy = strategy;
      po.devices = testing::EqualDevices(4);
      po.wire = w;
      auto p = MakePlan(m.graph, po);
      ASSERT_TRUE(p.ok()) << what << ": " << p.status().message();
      auto c = Coordinator::Create(p.value(), lc.cluster, {});
      ASSERT_TRUE(c.ok()) << c.status().message();
      ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
      ASSERT_TRUE(c.value()->Stats(/*reset=*/true).ok());
      Tensor got;
      Status s = c.value()->Run(x, &got, nullptr, 0);
      ASSERT_TRUE(s.ok()) << what << ": " << s.message();
      auto local = LocalRunner::Create(p.value(), m.weights, {});
      ASSERT_TRUE(local.ok()) << local.status().message();
      Tensor in_process;
      ASSERT_TRUE((*local)->Run(x, &in_process, nullptr).ok());
      if (w.dtype == WireDtype::kF32) {
        EXPECT_LE(MaxRelDiff(got, want), 1e-4) << what;
      } else {
        EXPECT_LE(MaxRelDiff(got, want), WireTolerance(w.dtype)) << what;
        EXPECT_GT(MaxRelDiff(got, want), 0) << what << ": not rounded?";
      }
      // Partial sums add up in arrival order on a worker: a last-bit
      // difference can round a later value to its neighbour in f16/bf16, a
      // few units of the dtype's precision at most.
      const double same = w.dtype == WireDtype::kF32   ? 1e-4
                          : w.dtype == WireDtype::kF16 ? 4.0 / 2048
                                                       : 4.0 / 256;
      EXPECT_LE(MaxRelDiff(got, in_process), same) << what;
      auto stats = c.value()->Stats(/*reset=*/false);
      ASSERT_TRUE(stats.ok()) << stats.status().message();
      Plan plain = p.value();
      plain.wire = WireSettings{};
      const RunStats f32 = CountCommunication(plain, 0);
      int64_t sent = 0, raw = 0;
      for (int d = 1; d < 4; ++d) {  // device 0's input goes via the client
        sent += (*stats)[d].bytes_sent;
        raw += f32.bytes_sent[d];
      }
      if (w.dtype != WireDtype::kF32) raw /= 2;
      if (w.lz4 && strategy != "lip") {
        EXPECT_LT(sent, raw) << what;
      } else if (w.lz4) {  // partial sums: dense, sent raw
        EXPECT_LE(sent, raw) << what;
      } else {
        EXPECT_EQ(sent, raw) << what;
      }
    }
  }
}

// An int8 model: workers receive their int8 weight slices and send the
// quantized activations as int8, a byte a value, as the plan counts them;
// the output is the int8 model's on one device.
TEST(ClusterRuntime, Int8ModelsSendInt8) {
  LocalWorkers lc(3);
  Model m = Load("cifarnet");
  const Shape in = m.graph.tensors.at(m.graph.inputs[0]).shape;
  std::vector<Tensor> samples;
  for (uint64_t i = 0; i < 4; ++i) samples.push_back(RandomInput(in, 100 + i));
  auto q = QuantizeStatic(samples, &m);
  ASSERT_TRUE(q.ok()) << q.status().message();
  const Tensor x = RandomInput(in, kInputSeed);
  const Tensor want = RunWholeOrFail(m, x);
  for (const std::string strategy : {"pipeline", "lop", "lip", "spatial"}) {
    const Plan p = MakeTestPlan(m, strategy, 3);
    int int8 = 0;
    for (const Transfer& t : p.transfers) int8 += t.int8;
    EXPECT_GT(int8, 0) << strategy;
    auto c = Coordinator::Create(p, lc.cluster, {});
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
    ASSERT_TRUE(c.value()->Stats(/*reset=*/true).ok());
    Tensor got;
    Status s = c.value()->Run(x, &got, nullptr, 0);
    ASSERT_TRUE(s.ok()) << strategy << ": " << s.message();
    EXPECT_LE(MaxRelDiff(got, want), 1e-4) << strategy;
    auto stats = c.value()->Stats(/*reset=*/false);
    ASSERT_TRUE(stats.ok()) << stats.status().message();
    const RunStats counted = CountCommunication(p, 0);
    for (int d = 1; d < 3; ++d) {  // device 0's input goes via the client
      EXPECT_EQ((*stats)[d].bytes_sent, counted.bytes_sent[d])
          << strategy << " device " << d;
    }
  }
}

TEST(ClusterRuntime, Resnet18SmallInputSpatialAndPipeline) {
  LocalWorkers lc(4);
  const Model m = Load("resnet18", Shape{1, 3, 64, 64});
  const Tensor x = RandomInput({1, 3, 64, 64}, kInputSeed);
  const Tensor want = RunWholeOrFail(m, x);
  for (const std::string strategy :
       {"spatial", "spatial+2d", "pipeline", "channel"}) {
    Plan p;
    if (strategy == "spatial+2d") {
      // Every chain on 2-D tiles (2 x 2 on four devices).
      PlanOptions po;
      po.strategy = "spatial";
      po.devices = testing::EqualDevices(4);
      po.model.spec = m.graph.name;
      po.tiles = TileShape::k2D;
      auto made = MakePlan(m.graph, po);
      ASSERT_TRUE(made.ok()) << made.status().message();
      p = std::move(made).value();
    } else {
      p = MakeTestPlan(m, strategy, 4);
    }
    auto c = Coordinator::Create(p, lc.cluster, {});
    ASSERT_TRUE(c.ok());
    ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
    Tensor got;
    Status s = c.value()->Run(x, &got, nullptr, 0);
    ASSERT_TRUE(s.ok()) << strategy << ": " << s.message();
    EXPECT_LE(MaxRelDiff(got, want), 1e-4) << strategy;
  }
}

TEST(ClusterRuntime, ConcurrentRequestsPipeline) {
  LocalWorkers lc(3);
  const Model m = Load("cifarnet");
  Plan p = MakeTestPlan(m, "pipeline", 3);
  auto c = Coordinator::Create(p, lc.cluster, {});
  ASSERT_TRUE(c.ok());
  ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
  const Tensor x = RandomInput(p.input_shape, kInputSeed);
  const Tensor want = RunWholeOrFail(m, x);
  std::vector<std::thread> th;
  std::atomic<int> ok{0};
  for (int k = 0; k < 4; ++k) {
    th.emplace_back([&, k] {
      for (int i = 0; i < 5; ++i) {
        Tensor got;
        if (c.value()->Run(x, &got, nullptr, k * 5 + i).ok() &&
            MaxRelDiff(got, want) <= 1e-4) {
          ok++;
        }
      }
    });
  }
  for (auto& t : th) t.join();
  EXPECT_EQ(ok, 20);
  auto st = c.value()->Stats(false);
  ASSERT_TRUE(st.ok());
  int64_t sent = 0;
  for (const auto& d : st.value()) sent += d.bytes_sent;
  EXPECT_GT(sent, 0);
}

TEST(ClusterRuntime, TimelineHasEveryTaskRunAndMessageOnTheCallersClock) {
  // What `shoal bench --trace` collects: per request, one span for each
  // task run on the device that ran it and one for each message between
  // devices (the answer to the coordinator included), within the request's
  // time on this process's clock, each message after the task that made it
  // and before the task that took it was ready.
  LocalWorkers lc(3);
  const Model m = Load("lenet5");
  int checked = 0;  // tasks whose inputs all came in messages
  for (const std::string strategy : {"lop", "pipeline"}) {
    SCOPED_TRACE(strategy);
    Plan p = MakeTestPlan(m, strategy, 3);
    auto c = Coordinator::Create(p, lc.cluster, {});
    ASSERT_TRUE(c.ok());
    ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
    ASSERT_TRUE(c.value()->Stats(/*reset=*/true).ok());
    const Tensor x = RandomInput(p.input_shape, kInputSeed);
    std::map<int64_t, std::pair<double, double>> window;
    for (int64_t seq = 1; seq <= 3; ++seq) {
      const double t0 = SteadySeconds();
      Tensor out;
      ASSERT_TRUE(c.value()->Run(x, &out, nullptr, seq).ok());
      window[seq] = {t0, SteadySeconds()};
    }
    auto st = c.value()->Stats(/*reset=*/true, /*timeline=*/true);
    ASSERT_TRUE(st.ok()) << st.status().message();
    // One host, one clock (the offset is taken as 0); a millisecond for
    // what happens between an event and the reading of the clock.
    constexpr double kSlack = 1e-3;
    std::map<std::pair<int64_t, int>, TraceSpan> task, send;
    for (const auto& d : st.value()) {
      EXPECT_EQ(d.timeline_dropped, 0);
      for (const TraceSpan& s : d.timeline) {
        ASSERT_TRUE(window.count(s.seq)) << s.seq;
        const auto [t0, t1] = window.at(s.seq);
        EXPECT_LE(s.ready_s, s.start_s);
        EXPECT_LE(s.start_s, s.end_s);
        EXPECT_GE(s.ready_s, t0 - kSlack);
        // A sender may hear its acknowledgement after the answer is back.
        EXPECT_LE(s.kind == TraceSpan::Kind::kTask ? s.end_s : s.start_s,
                  t1 + kSlack);
        auto& into = s.kind == TraceSpan::Kind::kTask ? task : send;
        EXPECT_TRUE(into.emplace(std::pair(s.seq, s.item), s).second);
      }
    }
    int crossing = 0;  // messages per request
    // Per (request, task) whose inputs all came in messages from workers:
    // the latest acknowledgement; -1 for the others (an input from the
    // coordinator, or handed over on the device after its producer's span).
    std::map<std::pair<int64_t, int>, double> last_in;
    for (size_t xi = 0; xi < p.transfers.size(); ++xi) {
      const Transfer& t = p.transfers[xi];
      for (int64_t seq = 1; seq <= 3; ++seq) {
        double in = -1;
        if (t.src.task >= 0) {
          const double made = task.at({seq, t.src.task}).end_s;
          if (t.dst.task < 0 ||
              p.DeviceOf(t.src.task, seq) != p.DeviceOf(t.dst.task, seq)) {
            crossing += seq == 1;
            ASSERT_TRUE(send.count({seq, int(xi)})) << xi;
            const TraceSpan& s = send.at({seq, int(xi)});
            EXPECT_EQ(s.device, p.DeviceOf(t.src.task, seq));
            EXPECT_GE(s.ready_s, made - kSlack);
            in = s.end_s;
          }
        }
        if (t.dst.task < 0) continue;
        auto [it, fresh] = last_in.try_emplace({seq, t.dst.task}, in);
        if (!fresh)
          it->second = it->second < 0 || in < 0 ? -1 : std::max(it->second, in);
      }
    }
    for (const auto& [key, in] : last_in) {
      if (in < 0) continue;
      EXPECT_LE(task.at(key).ready_s, in + kSlack);
      checked++;
    }
    EXPECT_GT(crossing, 0);
    EXPECT_EQ(send.size(), 3u * crossing);
    EXPECT_EQ(task.size(), 3 * p.tasks.size());
    for (const auto& [key, s] : task) {
      EXPECT_EQ(s.device, p.DeviceOf(key.second, key.first));
    }
    // The reset emptied the timeline.
    st = c.value()->Stats(false, true);
    ASSERT_TRUE(st.ok());
    for (const auto& d : st.value()) EXPECT_TRUE(d.timeline.empty());
  }
  EXPECT_GT(checked, 0);
}

TEST(ClusterRuntime, RedeployOfTheSameWeightsUploadsNothing) {
  LocalWorkers lc(2);
  const Model m = Load("lenet5");
  Plan p = MakeTestPlan(m, "lop", 2);
  DeployReport r1, r2, r3;
  {
    auto c = Coordinator::Create(p, lc.cluster, {});
    ASSERT_OK_STATUS(c.value()->Deploy(m.weights, &r1));
  }
  auto c = Coordinator::Create(p, lc.cluster, {});
  ASSERT_OK_STATUS(c.value()->Deploy(m.weights, &r2));
  EXPECT_GT(r1.uploaded_bytes[0] + r1.uploaded_bytes[1], 0);
  EXPECT_EQ(r2.uploaded_bytes[0] + r2.uploaded_bytes[1], 0);
  EXPECT_TRUE(r2.reused[0] && r2.reused[1]);
  // Another plan over the same weight slices: new executors, no upload.
  Plan q = p;
  q.strategy = "lop-again";
  auto c2 = Coordinator::Create(q, lc.cluster, {});
  ASSERT_OK_STATUS(c2.value()->Deploy(m.weights, &r3));
  EXPECT_FALSE(r3.reused[0]);
  EXPECT_EQ(r3.uploaded_bytes[0] + r3.uploaded_bytes[1], 0);
}

TEST(ClusterRuntime, WorkerOverItsMemoryBudgetRefuses) {
  LocalWorkers lc(2, /*memory=*/100000);
  const Model m = Load("cifarnet");
  Plan p = MakeTestPlan(m, "pipeline", 2);
  auto c = Coordinator::Create(p, lc.cluster, {});
  Status s = c.value()->Deploy(m.weights, nullptr);
  ASSERT_FALSE(s.ok());
  // Alone it does not fit: nothing to free would help.
  EXPECT_EQ(s.code(), Code::kFailedPrecondition) << s.ToString();
  EXPECT_NE(s.message().find("refuses the deployment"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("memory budget is"), std::string::npos);
}

// What plan `p` of `m` takes on a worker of its own, without a budget.
void DeployAlone(const Model& m, const Plan& p, DeployReport* r) {
  LocalWorkers free(1);
  ASSERT_OK_STATUS(
      Coordinator::Create(p, free.cluster, {}).value()->Deploy(m.weights, r));
}

// One Profile call of `g` on the worker behind `stub`: one run, 2 s at most.
grpc::Status ProfileOnce(rpc::Worker::Stub* stub, const Graph& g,
                         rpc::ProfileReply* rep) {
  rpc::ProfileRequest req;
  req.set_protocol(kProtocolVersion);
  req.set_graph_json(GraphToJson(g).dump());
  req.set_min_runs(1);
  req.set_max_seconds(2);
  grpc::ClientContext ctx;
  ctx.set_deadline(DeadlineIn(10000));
  return stub->Profile(&ctx, req, rep);
}

// A second plan deployed alongside the first (as serve switches plans) over
// the budget only because of the first: refused as exhausted, typed across
// gRPC, so that serve drains and deploys it alone, which fits.
TEST(ClusterRuntime, PlanKeptAlongsideThatLeavesNoRoomIsExhausted) {
  const Model m = Load("lenet5");
  const Plan p = MakeTestPlan(m, "pipeline", 1);
  DeployReport r;
  ASSERT_NO_FATAL_FAILURE(DeployAlone(m, p, &r));
  int64_t largest = 0;
  for (const auto& [name, t] : m.weights) {
    largest = std::max<int64_t>(largest, t.data.size() * sizeof(float));
  }
  const int64_t alone =
      DeviceWeightMemory(r.weight_bytes[0], largest) + r.activation_bytes[0];
  const int64_t held = r.weight_bytes[0] + r.activation_bytes[0];
  LocalWorkers lc(1, alone + held / 2);
  auto first = Coordinator::Create(p, lc.cluster, {});
  ASSERT_OK_STATUS(first.value()->Deploy(m.weights, nullptr));
  Plan q = p;
  q.strategy = "pipeline-again";  // another plan over the same weights
  CoordinatorOptions keep;
  keep.keep_previous = true;
  Status s = Coordinator::Create(q, lc.cluster, keep)
                 .value()
                 ->Deploy(m.weights, nullptr);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Code::kResourceExhausted) << s.ToString();
  EXPECT_NE(s.message().find("kept alongside"), std::string::npos)
      << s.message();
  // Not kept, the first plan goes before the second is built: it fits.
  ASSERT_OK_STATUS(Coordinator::Create(q, lc.cluster, {})
                       .value()
                       ->Deploy(m.weights, nullptr));
  const Tensor in =
      RandomInput(m.graph.tensors.at(m.graph.inputs[0]).shape, kInputSeed);
  Tensor out;
  s = first.value()->Run(in, &out, nullptr, 0);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("holds another plan"), std::string::npos)
      << s.message();
}

TEST(ClusterRuntime, DeadWorkerFailsTheRequestNamingItAndRestartRecovers) {
  LocalWorkers lc(3, 0, /*restartable=*/true);
  const Model m = Load("lenet5");
  Plan p = MakeTestPlan(m, "pipeline", 3);
  CoordinatorOptions co;
  co.timeout_ms = 3000;
  auto c = Coordinator::Create(p, lc.cluster, co);
  ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
  const Tensor x = RandomInput(p.input_shape, kInputSeed);
  Tensor got;
  ASSERT_TRUE(c.value()->Run(x, &got, nullptr, 0).ok());
  lc.workers[1].reset();  // dev1 dies
  const auto t0 = std::chrono::steady_clock::now();
  Status s = c.value()->Run(x, &got, nullptr, 1);
  const double s_taken =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dev1"), std::string::npos) << s.message();
  EXPECT_LT(s_taken, 5.0);
  lc.Restart(1);
  ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
  Status s2 = c.value()->Run(x, &got, nullptr, 2);
  EXPECT_TRUE(s2.ok()) << s2.message();
  EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, x)), 1e-4);
}

// A peer that opens mailboxes for many requests with a few bytes each (a
// mailbox is its task's whole input) is refused once the inputs held would
// pass half the memory budget; when those requests expire, the worker
// serves again.
TEST(ClusterRuntime, MailboxesOfRequestsInFlightAreBounded) {
  constexpr int64_t kBudget = 1 << 20;
  LocalWorkers lc(2, kBudget);
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  const Model m = LoadModel("lenet5", lo).value();
  PlanOptions po;
  po.strategy = "lop";
  po.devices = testing::EqualDevices(2);
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto c = Coordinator::Create(p.value(), lc.cluster, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
  // A transfer into a task on device 1 from the model input.
  int xi = -1;
  for (size_t i = 0; i < p->transfers.size(); ++i) {
    const Transfer& x = p->transfers[i];
    if (x.src.task == kModelInput && x.dst.task >= 0 &&
        p->DeviceOf(x.dst.task) == 1) {
      xi = static_cast<int>(i);
    }
  }
  ASSERT_GE(xi, 0);
  const Transfer& x = p->transfers[xi];
  const std::string addr = lc.cluster.devices[1].address;
  rpc::HealthReply hr;
  ASSERT_TRUE(testing::Health(addr, &hr).ok());
  auto stub = rpc::Worker::NewStub(MakeChannel(addr, 1 << 30));
  // The deployment's id as the coordinator makes it: the plan and the
  // devices' addresses.
  std::string plan_id = PlanToJson(p.value()).dump();
  for (const auto& d : lc.cluster.devices) plan_id += "|" + d.address;
  plan_id = HashString(plan_id);
  int refused_at = -1;
  std::string why;
  for (int i = 0; i < 300 && refused_at < 0; ++i) {
    rpc::TensorMessage msg;
    msg.set_protocol(kProtocolVersion);
    msg.set_request("flood-" + std::to_string(i));
    msg.set_seq(0);
    msg.set_reply_to("127.0.0.1:1");
    msg.set_timeout_ms(1500);
    msg.set_transfer(xi);
    msg.set_deployment(plan_id);
    for (int64_t v : x.dst.region.extent()) msg.add_shape(v);
    TensorToBytes(Tensor(x.dst.region.extent()), msg.mutable_data());
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    rpc::Ack ack;
    grpc::Status s = stub->Send(&ctx, msg, &ack);
    if (!s.ok()) {
      refused_at = i;
      why = s.error_message();
    }
  }
  ASSERT_GT(refused_at, 0) << "a flood of mailboxes was never refused: " << why;
  EXPECT_NE(why.find("of inputs for requests in flight"), std::string::npos)
      << why;
  EXPECT_NE(why.find("dev1"), std::string::npos) << why;
  EXPECT_TRUE(testing::Health(addr, &hr).ok());
  // After the flood's requests expire, requests run again.
  std::this_thread::sleep_for(std::chrono::milliseconds(1700));
  const Tensor in =
      RandomInput(m.graph.tensors.at(m.graph.inputs[0]).shape, kInputSeed);
  Tensor got;
  Status s = c.value()->Run(in, &got, nullptr, 1);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_LE(MaxRelDiff(got, RunWholeOrFail(m, in)), 1e-4);
}

// Profile and ProbeLink allocate what the caller names: a graph's weights
// and activations, a probe message. Over the worker's budget they are
// refused, naming it; within it they run.
TEST(ClusterRuntime, ProfileAndProbeSizesCountAgainstTheBudget) {
  constexpr int64_t kBudget = 8 << 20;
  LocalWorkers lc(1, kBudget);
  const std::string addr = lc.cluster.devices[0].address;
  auto stub = rpc::Worker::NewStub(MakeChannel(addr, 1 << 30));
  auto profile = [&](int64_t filters, rpc::ProfileReply* rep) {
    GraphBuilder b("probe");
    const std::string y =
        b.Conv("c", b.Input("x", {1, 64, 8, 8}), filters, 3, 1, 1);
    return ProfileOnce(stub.get(), b.Finish({y}).value(), rep);
  };
  rpc::ProfileReply rep;
  // 4096 filters: 9 MiB of weights, over the 8 MiB budget.
  grpc::Status s = profile(4096, &rep);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("refuses to profile"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("dev0"), std::string::npos);
  s = profile(16, &rep);
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_GE(rep.runs(), 1);

  auto probe = [&](int64_t bytes) {
    rpc::LinkProbeRequest req;
    req.set_protocol(kProtocolVersion);
    req.set_target(addr);
    req.set_bytes(bytes);
    req.set_count(1);
    req.set_timeout_ms(3000);
    rpc::LinkProbeReply r;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(10000));
    return stub->ProbeLink(&ctx, req, &r);
  };
  s = probe(4 << 20);  // over a quarter of 8 MiB
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(s.error_message().find("link probe"), std::string::npos)
      << s.error_message();
  s = probe(64 << 10);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

// A graph profiled beside a deployment the worker holds shares its
// budget: refused as exhausted (a profile of VGG16 whole beside a plan that
// held its fc layers was killed by its board's memory cgroup, not refused),
// and profiled once that plan is released.
TEST(ClusterRuntime, ProfileBesideADeploymentCountsWhatTheWorkerHolds) {
  const Model m = Load("lenet5");
  const Plan p = MakeTestPlan(m, "pipeline", 1);
  DeployReport r;
  ASSERT_NO_FATAL_FAILURE(DeployAlone(m, p, &r));
  const int64_t held = r.weight_bytes[0] + r.activation_bytes[0];
  GraphBuilder b("probe");
  const std::string y = b.Conv("c", b.Input("x", {1, 64, 8, 8}), 256, 3, 1, 1);
  const Graph g = b.Finish({y}).value();
  int64_t weights = 0, largest = 0;
  for (const auto& [name, t] : g.tensors) {
    if (!t.is_weight()) continue;
    weights += NumElements(t.shape) * 4;
    largest = std::max<int64_t>(largest, NumElements(t.shape) * 4);
  }
  const int64_t need =
      DeviceWeightMemory(weights, largest) + PeakActivationBytes(g);
  ASSERT_GT(need, held);  // the deployment fits alone too
  LocalWorkers lc(1, need + held / 2);
  auto stub =
      rpc::Worker::NewStub(MakeChannel(lc.cluster.devices[0].address, 1 << 30));
  auto profile = [&]() {
    rpc::ProfileReply rep;
    return ProfileOnce(stub.get(), g, &rep);
  };
  grpc::Status s = profile();
  EXPECT_TRUE(s.ok()) << s.error_message();
  auto c = Coordinator::Create(p, lc.cluster, {});
  ASSERT_OK_STATUS(c.value()->Deploy(m.weights, nullptr));
  s = profile();
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_NE(s.error_message().find("refuses to profile"), std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("beside the"), std::string::npos)
      << s.error_message();
  ASSERT_OK_STATUS(c.value()->Release());
  s = profile();
  EXPECT_TRUE(s.ok()) << s.error_message();
}

TEST(ClusterRuntime, GarbageAndOversizedMessagesLeaveTheWorkerUp) {
  WorkerOptions o;
  o.name = "victim";
  o.max_message_bytes = 64 << 10;
  auto w = Worker::Start(o);
  ASSERT_TRUE(w.ok());
  const int port = w.value()->port();
  ASSERT_NO_FATAL_FAILURE(testing::SendGarbage(port, 100000, 3));
  const std::string addr = "127.0.0.1:" + std::to_string(port);
  auto stub = rpc::Worker::NewStub(MakeChannel(addr, 1 << 30));
  rpc::Ack ack;
  {  // over the worker's message limit
    rpc::TensorMessage m;
    m.set_protocol(kProtocolVersion);
    m.mutable_data()->assign(1 << 20, 'x');
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_FALSE(stub->Send(&ctx, m, &ack).ok());
  }
  {  // well-formed protobuf, nonsense content, no deployment
    rpc::TensorMessage m;
    m.set_protocol(kProtocolVersion);
    m.set_transfer(-5);
    m.add_shape(-1);
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    EXPECT_FALSE(stub->Send(&ctx, m, &ack).ok());
  }
  {  // another protocol version is refused, naming both
    rpc::HaveBlobsRequest m;
    m.set_protocol(kProtocolVersion + 1);
    rpc::HaveBlobsReply r;
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    grpc::Status s = stub->HaveBlobs(&ctx, m, &r);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_NE(s.error_message().find("protocol version"), std::string::npos);
  }
  {  // a blob announcing more than it sends
    grpc::ClientContext ctx;
    ctx.set_deadline(DeadlineIn(3000));
    rpc::PutBlobsReply r;
    auto wr = stub->PutBlobs(&ctx, &r);
    rpc::BlobChunk ch;
    ch.set_protocol(kProtocolVersion);
    ch.set_hash("abc");
    ch.set_total_bytes(4000);
    ch.set_data(std::string(8000, 'y'));
    wr->Write(ch);
    wr->WritesDone();
    EXPECT_FALSE(wr->Finish().ok());
  }
  rpc::HealthReply hr;
  EXPECT_TRUE(testing::Health(addr, &hr).ok());
  EXPECT_EQ(hr.name(), "victim");
}

}  // namespace
}  // namespace shoal
