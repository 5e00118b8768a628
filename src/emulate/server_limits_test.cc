// What a worker's server gives any peer (runtime/wire.h, ServerLimits): a
// connection that carries no call is closed after the idle limit, and the
// coordinator's requests go on while workers close their connections (it
// asks a worker whose connection dropped whether it still holds the
// deployment before it fails a request).
#include <gtest/gtest.h>

#include <chrono>

#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "runtime/coordinator.h"
#include "runtime/runtime_test_util.h"
#include "runtime/wire.h"
#include "runtime/worker.h"

namespace shoal {
namespace {

using Clock = std::chrono::steady_clock;

TEST(ServerLimits, AConnectionWithoutACallIsClosedAfterTheIdleLimit) {
  WorkerOptions o;
  o.name = "idle";
  o.idle_connection_ms = 300;
  auto w = Worker::Start(o);
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto ch =
      MakeChannel("127.0.0.1:" + std::to_string(w.value()->port()), 1 << 20);
  ASSERT_TRUE(ch->WaitForConnected(std::chrono::system_clock::now() +
                                   std::chrono::seconds(5)));
  const auto t0 = Clock::now();
  // Keepalive pings are not calls: they do not keep it open.
  EXPECT_TRUE(ch->WaitForStateChange(
      GRPC_CHANNEL_READY,
      std::chrono::system_clock::now() + std::chrono::seconds(5)));
  EXPECT_NE(ch->GetState(false), GRPC_CHANNEL_READY);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - t0).count(), 4);
}

TEST(ServerLimits, DefaultLimitsKeepAnIdleConnection) {
  auto w = Worker::Start(WorkerOptions{});
  ASSERT_TRUE(w.ok()) << w.status().message();
  auto ch =
      MakeChannel("127.0.0.1:" + std::to_string(w.value()->port()), 1 << 20);
  ASSERT_TRUE(ch->WaitForConnected(std::chrono::system_clock::now() +
                                   std::chrono::seconds(5)));
  EXPECT_FALSE(ch->WaitForStateChange(
      GRPC_CHANNEL_READY,
      std::chrono::system_clock::now() + std::chrono::seconds(2)));
}

TEST(ServerLimits, RequestsGoOnWhileWorkersCloseTheirConnections) {
  // Every connection is asked to go after about 200 ms, and closed when idle
  // for 150 ms: dozens of drops during the requests below, each seen by the
  // coordinator's connection watch. Without the coordinator's question a
  // request fails within the first second ("was lost: its connection
  // dropped").
  WorkerOptions base;
  // Each message a worker sends takes 50 ms: a request is in flight most of
  // the time, so drops land while the coordinator waits on the device.
  base.link.latency_s = 0.05;
  base.idle_connection_ms = 150;
  base.connection_age_ms = 200;
  base.connection_grace_ms = 10000;
  testing::LocalWorkers lc(3, base);
  LoadOptions lo;
  lo.with_weights = true;
  auto m = LoadModel("lenet5", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const Tensor x =
      RandomInput(m->graph.tensors.at(m->graph.inputs[0]).shape, 3);
  const Tensor want = testing::RunWholeOrFail(*m, x);
  PlanOptions po;
  po.strategy = "lop";
  po.devices = testing::EqualDevices(3);
  auto p = MakePlan(m->graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  auto c = Coordinator::Create(*p, lc.cluster, {});
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Status deployed = c.value()->Deploy(m->weights, nullptr);
  ASSERT_TRUE(deployed.ok()) << deployed.message();
  for (int runs = 0; runs < 12; ++runs) {
    Tensor got;
    const Status s = c.value()->Run(x, &got, nullptr, runs);
    ASSERT_TRUE(s.ok()) << "request " << runs << ": " << s.message();
    ASSERT_LE(MaxRelDiff(got, want), 1e-4) << "request " << runs;
    // Some requests start on a connection just closed for idling.
    if (runs % 4 == 3) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

}  // namespace
}  // namespace shoal
