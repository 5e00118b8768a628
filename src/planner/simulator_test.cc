#include "sim/simulator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "graph/shape_inference.h"
#include "models/load_model.h"
#include "partition/strategy.h"
#include "plan/run_stats.h"
#include "planner/predict.h"

namespace shoal {
namespace {

// A relu over [1, n]: its cost under the test profiles is only the fit's
// intercept, so a task's time is set exactly by its device.
Graph Relu(int64_t n) {
  Graph g;
  g.name = "relu";
  EXPECT_TRUE(g.AddInput("x", {1, n}).ok());
  Node r;
  r.name = "r";
  r.op = "Relu";
  r.inputs = {"x"};
  r.outputs = {"y"};
  EXPECT_TRUE(g.AddNode(r).ok());
  g.outputs = {"y"};
  EXPECT_TRUE(InferShapes(&g).ok());
  return g;
}

Transfer Move(int src, const std::string& st, int dst, const std::string& dt,
              int64_t n) {
  Transfer x;
  x.src = Endpoint{src, st, Region::Full({1, n})};
  x.dst = Endpoint{dst, dt, Region::Full({1, n})};
  x.layer = "r";
  return x;
}

// A chain of tasks, task i on devices[i] (a replica list), each a relu of
// n elements; the input device is the first task's.
Plan Chain(int num_devices, const std::vector<std::vector<int>>& devices,
           int64_t n) {
  Plan p;
  p.strategy = "test";
  for (int d = 0; d < num_devices; ++d) {
    p.devices.push_back(PlanDevice{"dev" + std::to_string(d), 1.0, 0});
  }
  p.input_name = "x";
  p.output_name = "y";
  p.input_shape = {1, n};
  p.output_shape = {1, n};
  p.input_device = devices.front().front();
  p.output_device = devices.back().front();
  for (size_t i = 0; i < devices.size(); ++i) {
    Task t;
    t.id = static_cast<int>(i);
    t.name = "t" + std::to_string(i);
    t.devices = devices[i];
    t.scheme = "pipeline";
    t.fragment = Relu(n);
    p.tasks.push_back(t);
    p.transfers.push_back(i == 0 ? Move(kModelInput, "x", 0, "x", n)
                                 : Move(i - 1, "y", i, "x", n));
  }
  p.transfers.push_back(Move(devices.size() - 1, "y", kModelOutput, "y", n));
  return p;
}

// Devices whose every node takes `seconds[d]`; links as given.
LatencyModel Model(const std::vector<double>& seconds,
                   const std::vector<Link>& links) {
  Cluster c = EqualCluster(static_cast<int>(seconds.size()));
  Profile p;
  for (size_t d = 0; d < seconds.size(); ++d) {
    DeviceProfile dp;
    dp.name = c.devices[d].name;
    dp.fits["*"] = OpFit{seconds[d], 0, 0, 1};
    dp.link = links.empty() ? Link{} : links[d];
    p.devices.push_back(dp);
  }
  return LatencyModel::FromProfile(c, p).value();
}

TEST(Simulator, TwoStagePipelineThroughputIsTheSlowestStage) {
  const Plan p = Chain(2, {{0}, {1}}, 16);
  const LatencyModel m = Model({0.1, 0.3}, {});
  SimOptions o;
  o.requests = 50;
  o.concurrency = 4;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // The first request: both stages; then one answer per 0.3 s.
  EXPECT_NEAR(r->wall_s, 0.1 + 50 * 0.3, 1e-9);
  EXPECT_NEAR(r->devices[0].compute_ms_median, 100, 1e-6);
  EXPECT_NEAR(r->devices[1].compute_ms_median, 300, 1e-6);
  // One request alone: the sum of the stages.
  o.concurrency = 1;
  o.requests = 3;
  r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok());
  for (double l : r->latency_ms) EXPECT_NEAR(l, 400, 1e-6);
}

TEST(Simulator, TransferTakesLatencyPlusBytesOverBandwidth) {
  const int64_t n = 250000;  // 1 MB
  const Plan p = Chain(2, {{0}, {1}}, n);
  // dev0 sends 1 MB at 8 Mbit/s (1 s) + 20 ms; dev1's link is unlimited.
  const LatencyModel m = Model({0.01, 0.02}, {Link{8e6, 0.02}, Link{}});
  SimOptions o;
  o.requests = 2;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->latency_ms[0], 10 + 1020 + 20, 1e-6);
  EXPECT_EQ(r->devices[0].bytes_sent, 2 * 4 * n);
  EXPECT_EQ(r->devices[1].bytes_received, 2 * 4 * n);
}

TEST(Simulator, UplinkSerialisesTwoSends) {
  // Task 0 on dev0 feeds tasks 1 and 2 on dev1 and dev2: dev0 sends 1 MB
  // twice over one 8 Mbit/s link, so the second arrives a second later.
  const int64_t n = 250000;
  Plan p = Chain(3, {{0}, {1}}, n);
  Task t2 = p.tasks[1];
  t2.id = 2;
  t2.name = "t2";
  t2.devices = {2};
  p.tasks.push_back(t2);
  p.transfers.push_back(Move(0, "y", 2, "x", n));
  // The model output is the sum of tasks 1 and 2.
  Transfer out2 = Move(2, "y", kModelOutput, "y", n);
  out2.merge = Merge::kSum;
  p.transfers[2].merge = Merge::kSum;
  p.transfers.push_back(out2);
  const LatencyModel m =
      Model({0.0, 0.0, 0.0}, {Link{8e6, 0.0}, Link{}, Link{}});
  SimOptions o;
  o.requests = 1;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->latency_ms[0], 2000, 1e-6);
  // With a link per message (no contention) it would be 1 s: the second
  // send waited behind the first.
}

// dev0 feeds dev1 and dev2, whose outputs are summed on dev3: 1 MB per
// message, 4 messages. Per-device links of 8 Mbit/s: dev0's two sends
// queue (2 s), dev1's and dev2's go side by side (1 s). On a shared medium
// of 16 Mbit/s each message holds the channel 1 s (up to the access point
// and down), whichever device sends it: 4 s, and one request per 4 s.
TEST(Simulator, ASharedMediumSerialisesEveryDevicesSends) {
  const int64_t n = 250000;
  Plan p = Chain(4, {{0}, {1}, {2}, {3}}, n);
  p.transfers[2] = Move(0, "y", 2, "x", n);
  p.transfers[3].merge = Merge::kSum;
  Transfer fan_in = Move(1, "y", 3, "x", n);
  fan_in.merge = Merge::kSum;
  p.transfers.push_back(fan_in);
  const std::vector<Link> links(4, Link{8e6, 0.0});
  Cluster c = EqualCluster(4);
  Profile prof;
  for (int d = 0; d < 4; ++d) {
    DeviceProfile dp;
    dp.name = c.devices[d].name;
    dp.fits["*"] = OpFit{0.0, 0, 0, 1};
    dp.link = links[d];
    prof.devices.push_back(dp);
  }
  SimOptions o;
  o.requests = 1;
  auto per_device = Simulate(p, LatencyModel::FromProfile(c, prof).value(), o);
  ASSERT_TRUE(per_device.ok()) << per_device.status().message();
  EXPECT_NEAR(per_device->latency_ms[0], 3000, 1e-6);
  c.network = Medium{true, 16e6};
  const LatencyModel shared = LatencyModel::FromProfile(c, prof).value();
  auto r = Simulate(p, shared, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->latency_ms[0], 4000, 1e-6);
  // The planner's throughput: the channel's 4 s per request, not a
  // device's 2 s.
  auto pred = PredictPlan(p, shared);
  ASSERT_TRUE(pred.ok()) << pred.status().message();
  EXPECT_NEAR(pred->medium_s, 4.0, 1e-9);
  EXPECT_NEAR(pred->period_s(), 4.0, 1e-9);
}

// Task 0 on dev0 feeds tasks 1..4 on dev1..dev4, whose outputs are summed
// on dev0. dev0's link is 8 Mbit/s, the others' unlimited: one message per
// device puts 4 MB on dev0's uplink, a binary broadcast tree 2 MB (dev1
// and dev3 forward the chunks), a chain 1 MB.
TEST(Simulator, BroadcastTreesAndChainsRelieveTheSourcesUplink) {
  const int64_t n = 250000;  // 1 MB
  Plan p = Chain(5, {{0}}, n);
  p.transfers.pop_back();  // task 0's output goes to tasks 1..4 instead
  p.output_device = 0;
  for (int d = 1; d <= 4; ++d) {
    Task t = p.tasks[0];
    t.id = d;
    t.name = "t" + std::to_string(d);
    t.devices = {d};
    p.tasks.push_back(t);
    p.transfers.push_back(Move(0, "y", d, "x", n));
    Transfer out = Move(d, "y", kModelOutput, "y", n);
    out.merge = Merge::kSum;
    p.transfers.push_back(out);
  }
  const LatencyModel m =
      Model({0, 0, 0, 0, 0}, {Link{8e6, 0.0}, Link{}, Link{}, Link{}, Link{}});
  SimOptions o;
  o.requests = 1;
  std::map<int, double> latency_ms;
  for (int fanout : {0, 1, 2}) {
    p.broadcast.fanout = fanout;
    auto r = Simulate(p, m, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    latency_ms[fanout] = r->latency_ms[0];
    const RunStats counted = CountCommunication(p, 1);
    for (int d = 0; d < 5; ++d) {
      EXPECT_EQ(r->devices[d].bytes_sent, counted.bytes_sent[d]) << fanout;
    }
    EXPECT_EQ(r->devices[0].bytes_sent, (fanout == 0 ? 4 : fanout) * 4 * n);
  }
  EXPECT_NEAR(latency_ms[0], 4000, 1e-6);
  // The last chunk of each copy leaves dev0 when its 2 MB (1 MB) are out.
  EXPECT_NEAR(latency_ms[2], 2000, 1e-6);
  EXPECT_NEAR(latency_ms[1], 1000, 1e-6);
  // Scattered: dev0 sends each chunk once, to one receiver in turn, which
  // passes it to the other three: 1 MB on dev0's uplink, and each of
  // dev1..dev4 sends three quarters of it.
  p.broadcast.fanout = kMaxBroadcastFanout;
  p.broadcast.scatter = true;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const RunStats counted = CountCommunication(p, 1);
  for (int d = 0; d < 5; ++d) {
    EXPECT_EQ(r->devices[d].bytes_sent, counted.bytes_sent[d]) << d;
    EXPECT_EQ(r->devices[d].bytes_received,
              d == 0 ? 4 * 4 * n : 4 * n)  // dev0: the four outputs
        << d;
  }
  EXPECT_EQ(r->devices[0].bytes_sent, 4 * n);
  int64_t relayed = 0;
  for (int d = 1; d <= 4; ++d) relayed += r->devices[d].bytes_sent - 4 * n;
  EXPECT_EQ(relayed, 3 * 4 * n);
  EXPECT_NEAR(r->latency_ms[0], 1000, 1e-6);
}

// Two devices whose tasks take 10 and 20 ms; each spends 2 ms of CPU to
// send a message, the second 3 ms to receive one.
Profile MessageCpuProfile(const Cluster& c) {
  Profile prof;
  for (int d = 0; d < 2; ++d) {
    DeviceProfile dp;
    dp.name = c.devices[d].name;
    dp.fits["*"] = OpFit{d == 0 ? 0.01 : 0.02, 0, 0, 1};
    dp.send_cpu_s = 0.002;
    dp.recv_cpu_s = d == 1 ? 0.003 : 0;
    prof.devices.push_back(dp);
  }
  return prof;
}

TEST(Simulator, MessagesCostTheirDevicesCpu) {
  // dev0 spends 2 ms of CPU sending a message, dev1 3 ms receiving one;
  // both unlimited, so each is a plain delay on the way.
  const Plan p = Chain(2, {{0}, {1}}, 16);
  Cluster c = EqualCluster(2);
  Profile prof = MessageCpuProfile(c);
  const LatencyModel m = LatencyModel::FromProfile(c, prof).value();
  EXPECT_EQ(m.SendCpuSeconds(0, 64), 0.002);
  EXPECT_EQ(m.RecvCpuSeconds(1, 64), 0.003);
  SimOptions o;
  o.requests = 2;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // 10 ms, send 2 ms, receive 3 ms, 20 ms, and dev1's 2 ms to send the
  // answer to the coordinator (no link: it is the output device).
  for (double l : r->latency_ms) EXPECT_NEAR(l, 37, 1e-9);
  // Per byte on top: the 64 B message costs dev1 64 * 10 us more to
  // receive, and dev0 64 * 5 us more to send.
  prof.devices[1].recv_cpu_per_byte_s = 1e-5;
  prof.devices[0].send_cpu_per_byte_s = 5e-6;
  const LatencyModel mb = LatencyModel::FromProfile(c, prof).value();
  EXPECT_NEAR(mb.RecvCpuSeconds(1, 64), 0.003 + 64e-5, 1e-12);
  r = Simulate(p, mb, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (double l : r->latency_ms) EXPECT_NEAR(l, 37 + 0.64 + 0.32, 1e-9);
  prof.devices[1].recv_cpu_per_byte_s = 0;
  prof.devices[0].send_cpu_per_byte_s = 0;
  // Under a quota (dev1 at 0.05 of a core) the receive takes the quota
  // like compute does: 3 ms of CPU stretch to far more than 3 ms of wall.
  c.devices[1].cpu = 0.05;
  auto at = [&](double recv_s) {
    prof.devices[1].recv_cpu_s = recv_s;
    const LatencyModel mq = LatencyModel::FromProfile(c, prof).value();
    auto rq = Simulate(p, mq, o);
    EXPECT_TRUE(rq.ok()) << rq.status().message();
    return rq.ok() ? rq->latency_ms[0] : 0.0;
  };
  EXPECT_GT(at(0.003) - at(0.0), 3 * 5);
}

TEST(Simulator, ThePlannersPredictionCountsMessagesCpuToo) {
  // The planner's critical path (planner/predict.h) charges a message's
  // CPU where the simulator does: 10 + 2 + 3 + 20 + 2 ms.
  const Plan p = Chain(2, {{0}, {1}}, 16);
  Cluster c = EqualCluster(2);
  Profile prof = MessageCpuProfile(c);
  auto pr = PredictPlan(p, LatencyModel::FromProfile(c, prof).value());
  ASSERT_TRUE(pr.ok()) << pr.status().message();
  EXPECT_NEAR(pr->latency_s, 0.037, 1e-12);
  EXPECT_NEAR(pr->compute_s[1], 0.020, 1e-12);  // unlimited: not its work
  // dev1 at 0.05 of a core (1 ms per 20 ms period), 0.02 ms of which its
  // idle worker uses per period. Its receive (3 ms), task (20 ms paced: 1
  // ms) and the answer's send (2 ms) are 6 ms of CPU: the first period's
  // quota runs at once, then about a period per ms, as in the simulator.
  c.devices[1].cpu = 0.05;
  prof.devices[1].idle_cpu_per_s = 0.001;
  const LatencyModel mq = LatencyModel::FromProfile(c, prof).value();
  const double f = mq.QuotaLeft(1).fraction();
  EXPECT_NEAR(f, 0.049, 1e-12);
  pr = PredictPlan(p, mq);
  ASSERT_TRUE(pr.ok()) << pr.status().message();
  EXPECT_GT(pr->latency_s, 0.012 + 5 * 0.020);
  EXPECT_LT(pr->latency_s, 0.012 + 7 * 0.020);
  SimOptions o;
  o.requests = 20;
  auto r = Simulate(p, mq, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  double mean = 0;
  for (double l : r->latency_ms) mean += l / 20;
  EXPECT_NEAR(pr->latency_s * 1e3, mean, 0.15 * mean);
  // Per request its work is the CPU over what the quota leaves.
  EXPECT_NEAR(pr->compute_s[1], 0.005 / f + 0.020 * 0.05 / f, 1e-9);
}

TEST(Simulator, ReplicasAlternate) {
  const Plan p = Chain(3, {{0}, {1, 2}}, 16);
  const LatencyModel m = Model({0.0, 0.1, 0.3}, {});
  SimOptions o;
  o.requests = 4;  // requests 1..4: replica 1 % 2 = dev2 first
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_NEAR(r->latency_ms[0], 300, 1e-6);
  EXPECT_NEAR(r->latency_ms[1], 100, 1e-6);
  EXPECT_NEAR(r->latency_ms[2], 300, 1e-6);
  EXPECT_NEAR(r->latency_ms[3], 100, 1e-6);
  EXPECT_EQ(r->devices[1].task_runs, 2);
  EXPECT_EQ(r->devices[2].task_runs, 2);
  // Per task and device: the replicated task 1 once on each replica.
  ASSERT_EQ(r->devices[0].tasks.size(), 1u);
  EXPECT_EQ(r->devices[0].tasks[0].task, 0);
  EXPECT_EQ(r->devices[0].tasks[0].runs, 4);
  for (int d : {1, 2}) {
    ASSERT_EQ(r->devices[d].tasks.size(), 1u);
    EXPECT_EQ(r->devices[d].tasks[0].task, 1);
    EXPECT_EQ(r->devices[d].tasks[0].runs, 2);
    EXPECT_NEAR(r->devices[d].tasks[0].compute_ms_median, d == 1 ? 100 : 300,
                1e-6);
  }
}

TEST(Simulator, PacedTasksUnderAQuota) {
  // 0.06 of a core: 1.2 ms of CPU per 20 ms period. Four tasks of 10 ms (at
  // that speed) need 0.6 ms of CPU each: under the quota alone they could
  // all run in the first period, but the worker paces each to 10 ms; the
  // quota may add a wait for a period boundary on top.
  Cluster c = EqualCluster(1);
  c.devices[0].cpu = 0.06;
  Profile prof;
  DeviceProfile dp;
  dp.name = "dev0";
  dp.fits["*"] = OpFit{0.01, 0, 0, 1};
  prof.devices.push_back(dp);
  const Plan p = Chain(1, {{0}, {0}, {0}, {0}}, 16);
  const LatencyModel m = LatencyModel::FromProfile(c, prof).value();
  SimOptions o;
  o.requests = 3;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  for (double l : r->latency_ms) {
    EXPECT_GE(l, 40 - 1e-9);
    EXPECT_LE(l, 40 + 4 * 20);
  }
  // An idle worker using 0.6 ms of CPU a period (gRPC's timers) leaves
  // 0.6 ms for the tasks: one task a period, whatever the pacing says, so
  // four tasks span at least three period boundaries.
  prof.devices[0].idle_cpu_per_s = 0.03;
  const LatencyModel mi = LatencyModel::FromProfile(c, prof).value();
  o.requests = 20;
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    o.seed = seed;
    r = Simulate(p, mi, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    // Back to back, request k + 1 starts where k ended: 4 tasks a request
    // at one per period is 80 ms a request on average.
    EXPECT_NEAR(r->wall_s / o.requests, 0.080, 0.004) << seed;
  }
  o.cpu_quota = false;
  r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->latency_ms[0], 40, 1e-9);
}

TEST(Simulator, UnderAQuotaTheLinkComesBeforeTheSendCpu) {
  // As the worker's sender does: the emulated link's time first, then
  // gRPC's send CPU. dev0 runs at 0.05 of a core (1 ms of CPU per 20 ms,
  // 0.2 ms of it taken by its idle worker), so its 100 ms tasks (5 ms of
  // CPU) are held by the quota, not the pacing, and end with their
  // period's quota partly spent. Its 0.8 ms of send CPU comes after a
  // 100 ms link (five periods later, a period nothing has used yet) and
  // runs at once; CPU first, it would wait for the next period.
  Cluster c = EqualCluster(2);
  c.devices[0].cpu = 0.05;
  Profile prof;
  for (int d = 0; d < 2; ++d) {
    DeviceProfile dp;
    dp.name = c.devices[d].name;
    dp.fits["*"] = OpFit{d == 0 ? 0.1 : 0.001, 0, 0, 1};
    prof.devices.push_back(dp);
  }
  prof.devices[0].idle_cpu_per_s = 0.01;
  prof.devices[0].send_cpu_s = 0.0008;
  prof.devices[0].link = Link{0, 0.1};
  const LatencyModel m = LatencyModel::FromProfile(c, prof).value();
  const Plan p = Chain(2, {{0}, {1}}, 16);
  SimOptions o;
  o.requests = 4;
  o.trace = true;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    o.seed = seed;
    auto r = Simulate(p, m, o);
    ASSERT_TRUE(r.ok()) << r.status().message();
    int sends = 0;
    for (const TraceSpan& x : r->spans) {
      if (x.kind != TraceSpan::Kind::kSend || x.device != 0) continue;
      sends++;
      EXPECT_NEAR(x.end_s - x.start_s, 0.1008, 1e-9) << seed;
    }
    EXPECT_EQ(sends, o.requests);
  }
}

TEST(Simulator, TheInputDevicesOwnPartGoesFirst) {
  // As the coordinator sends the input: the input device's own part at
  // once, then the others through its link (5 ms here), whatever the order
  // of the plan's transfers. Task 0 runs on dev1, task 1 on dev0, the
  // input device; both read the input and answer the coordinator.
  Plan p = Chain(2, {{1}, {0}}, 16);
  p.input_device = 0;
  p.output_device = 0;
  p.transfers = {
      Move(kModelInput, "x", 0, "x", 16), Move(kModelInput, "x", 1, "x", 16),
      Move(0, "y", kModelOutput, "y", 16), Move(1, "y", kModelOutput, "y", 16)};
  const LatencyModel m = Model({0.01, 0.01}, {Link{0, 0.005}, Link{}});
  SimOptions o;
  o.requests = 1;
  o.trace = true;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  int seen = 0;
  for (const TraceSpan& x : r->spans) {
    if (x.kind != TraceSpan::Kind::kTask) continue;
    seen++;
    EXPECT_NEAR(x.start_s, x.item == 1 ? 0.0 : 0.005, 1e-12) << x.item;
  }
  EXPECT_EQ(seen, 2);
}

TEST(Simulator, InputPartsQueueOnTheLinkButOverlapTheirLatencies) {
  // The coordinator sends the input parts of three devices from several
  // threads (runtime/coordinator.cc): their bytes queue on the input
  // device's link (1 KB at 8 Mbit/s: 1 ms each), their 20 ms latencies
  // overlap. Task d runs on dev d+1 and answers the coordinator.
  const int64_t n = 250;  // 1 KB
  Plan p = Chain(4, {{1}, {2}, {3}}, n);
  p.input_device = 0;
  p.output_device = 0;
  p.transfers.clear();
  for (int t = 0; t < 3; ++t) {
    p.transfers.push_back(Move(kModelInput, "x", t, "x", n));
    Transfer out = Move(t, "y", kModelOutput, "y", n);
    out.merge = Merge::kSum;
    p.transfers.push_back(out);
  }
  const LatencyModel m =
      Model({0.0, 0.0, 0.0, 0.0}, {Link{8e6, 0.02}, Link{}, Link{}, Link{}});
  SimOptions o;
  o.requests = 1;
  o.trace = true;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::vector<double> starts;
  for (const TraceSpan& x : r->spans) {
    if (x.kind == TraceSpan::Kind::kTask) starts.push_back(x.start_s);
  }
  std::sort(starts.begin(), starts.end());
  ASSERT_EQ(starts.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(starts[i], 0.001 * (i + 1) + 0.02, 1e-9);
}

TEST(Simulator, TraceHasEveryRunAndMessageInOrder) {
  // Three stages over links, two requests in flight: one span per request,
  // per task run and per message, each message after the task that made it
  // and before the task that takes it, each request as long as its latency.
  const Plan p = Chain(3, {{0}, {1}, {2}}, 16);
  const LatencyModel m =
      Model({0.01, 0.03, 0.02}, {Link{1e6, 0.005}, Link{1e6, 0.002}, Link{}});
  SimOptions o;
  o.requests = 5;
  o.concurrency = 2;
  auto r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->spans.empty());  // only when asked
  o.trace = true;
  r = Simulate(p, m, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::map<std::pair<int64_t, int>, TraceSpan> task, send;
  for (const TraceSpan& x : r->spans) {
    EXPECT_LE(x.ready_s, x.start_s);
    EXPECT_LE(x.start_s, x.end_s);
    switch (x.kind) {
      case TraceSpan::Kind::kRequest:
        EXPECT_NEAR((x.end_s - x.start_s) * 1e3, r->latency_ms[x.seq - 1],
                    1e-9);
        break;
      case TraceSpan::Kind::kTask:
        EXPECT_EQ(x.device, x.item);  // task i on dev i
        EXPECT_TRUE(task.emplace(std::pair(x.seq, x.item), x).second);
        break;
      case TraceSpan::Kind::kSend:
        EXPECT_TRUE(send.emplace(std::pair(x.seq, x.item), x).second);
        break;
    }
  }
  // Transfers 1 and 2 go between devices, 3 is the answer.
  EXPECT_EQ(task.size(), 5u * 3);
  EXPECT_EQ(send.size(), 5u * 3);
  for (int64_t seq = 1; seq <= 5; ++seq) {
    for (int xi = 1; xi <= 3; ++xi) {
      const TraceSpan& s = send.at({seq, xi});
      const TraceSpan& from = task.at({seq, xi - 1});
      EXPECT_GE(s.ready_s, from.end_s - 1e-12);
      if (xi < 3) {
        EXPECT_LE(s.end_s, task.at({seq, xi}).ready_s + 1e-12);
      }
    }
  }
}

TEST(Simulator, BytesEqualThePlansCountedBytes) {
  LoadOptions lo;
  auto model = LoadModel("lenet5", lo);
  ASSERT_TRUE(model.ok());
  Cluster c = EqualCluster(3);
  c.devices[0].link = Link{62e6, 0.009};
  c.devices[1].link = Link{62e6, 0.009};
  const LatencyModel m = LatencyModel::FromCluster(c);
  for (const std::string s : {"pipeline", "lop", "lip", "fuse", "data"}) {
    PlanOptions po;
    po.strategy = s;
    po.devices = c.PlanDevices();
    po.model.spec = "lenet5";
    auto p = MakePlan(model->graph, po);
    ASSERT_TRUE(p.ok()) << s << ": " << p.status().message();
    SimOptions o;
    o.requests = 5;
    o.concurrency = 2;
    auto r = Simulate(*p, m, o);
    ASSERT_TRUE(r.ok()) << s << ": " << r.status().message();
    RunStats want;
    want.bytes_sent.assign(3, 0);
    want.bytes_received.assign(3, 0);
    for (int seq = 1; seq <= 5; ++seq) {
      const RunStats c1 = CountCommunication(*p, seq);
      want.bytes_total += c1.bytes_total;
      for (int d = 0; d < 3; ++d) {
        want.bytes_sent[d] += c1.bytes_sent[d];
        want.bytes_received[d] += c1.bytes_received[d];
      }
    }
    EXPECT_EQ(r->bytes_total, want.bytes_total) << s;
    int64_t sent = 0;
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(r->devices[d].bytes_sent, want.bytes_sent[d]) << s;
      EXPECT_EQ(r->devices[d].bytes_received, want.bytes_received[d]) << s;
      sent += r->devices[d].bytes_sent;
    }
    EXPECT_EQ(sent, want.bytes_total) << s;
    EXPECT_GT(want.bytes_total, 0) << s;
  }
}

TEST(Simulator, UnknownDeviceIsNamed) {
  const Plan p = Chain(2, {{0}, {1}}, 4);
  Cluster c = EqualCluster(3);
  c.devices[0].name = "a";
  c.devices[1].name = "b";
  auto r = Simulate(p, LatencyModel::FromCluster(c), SimOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("dev0"), std::string::npos);
}

}  // namespace
}  // namespace shoal
