#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "cluster/cluster.h"
#include "graph/random_input.h"
#include "partition/plan_model.h"
#include "partition/strategy.h"
#include "profile/profiler.h"
#include "runtime/coordinator.h"
#include "runtime/worker.h"
#include "sim/latency_model.h"

namespace shoal {
namespace {

TEST(Profiler, ProfilesLenetOnInProcessWorkers) {
  ModelRef ref;
  ref.spec = "lenet5";
  auto m = LoadPlanModel(ref, true);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto variants = ProfileVariants(m->graph);
  ASSERT_TRUE(variants.ok()) << variants.status().message();
  Cluster c;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int i = 0; i < 2; ++i) {
    WorkerOptions wo;
    wo.name = "w" + std::to_string(i);
    wo.link = i == 0 ? Link{62e6, 0.009} : Link{};
    auto w = Worker::Start(wo);
    ASSERT_TRUE(w.ok()) << w.status().message();
    DeviceSpec d;
    d.name = wo.name;
    d.address = "127.0.0.1:" + std::to_string((*w)->port());
    c.devices.push_back(d);
    workers.push_back(std::move(w).value());
  }
  // A plan served on the cluster while it is profiled: still there after.
  PlanOptions po;
  po.strategy = "pipeline";
  po.devices = c.PlanDevices();
  po.model = ref;
  auto served = MakePlan(m->graph, po);
  ASSERT_TRUE(served.ok()) << served.status().message();
  auto coord = Coordinator::Create(*served, c, CoordinatorOptions{});
  ASSERT_TRUE(coord.ok()) << coord.status().message();
  ASSERT_TRUE((*coord)->Deploy(m->weights, nullptr).ok());
  ProfilerOptions o;
  o.model = "lenet5";
  o.graph = &m->graph;
  o.repeat = 2;
  o.min_seconds = 0.01;
  o.rounds = 2;
  // Called from each device's thread: counted under a lock, and each
  // device's count must climb one by one to its total.
  std::mutex mu;
  int calls = 0;
  std::map<std::string, int> last;
  bool in_order = true;
  o.progress = [&](const ProfileProgress& pr) {
    std::lock_guard<std::mutex> lock(mu);
    ++calls;
    int& l = last[pr.device];
    in_order = in_order && (pr.done == l + 1 || pr.done == l) &&
               pr.total == ProfileStepsPerDevice(variants->size(), o);
    l = pr.done;
  };
  auto p = ProfileCluster(c, *variants, o);
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_EQ(p->devices.size(), 2u);
  // Each device: its variants and the whole model in each round, its
  // link, its CPU per byte.
  EXPECT_EQ(calls, 2 * (2 * (static_cast<int>(variants->size()) + 1) + 2));
  EXPECT_EQ(ProfileStepsPerDevice(variants->size(), o),
            2 * (static_cast<int>(variants->size()) + 1) + 1);
  EXPECT_TRUE(in_order);
  for (const auto& [name, l] : last) {
    EXPECT_EQ(l, ProfileStepsPerDevice(variants->size(), o)) << name;
  }
  for (const auto& d : p->devices) {
    EXPECT_EQ(d.samples.size(), variants->size());
    for (const auto& s : d.samples) {
      // Convs and fc layers have a step of their own in the model; an
      // activation fused into a conv, or a flatten (a view), get 0 there.
      if (s.op == "Conv" || s.op == "Gemm") {
        EXPECT_GT(s.seconds, 0) << s.layer;
        EXPECT_GT(s.cpu_seconds, 0) << s.layer;
      }
      // Whole layers were also timed in the model; splits only alone.
      if (s.variant == "whole") {
        EXPECT_GT(s.alone_seconds, 0) << s.layer;
        EXPECT_GT(s.alone_cpu_seconds, 0) << s.layer;
      } else {
        EXPECT_EQ(s.alone_seconds, 0) << s.layer;
      }
    }
    EXPECT_TRUE(d.fits.count("*"));
    EXPECT_TRUE(d.fits.count("Conv"));
  }
  // The shaped link: 1 MiB at 62 Mbit/s is 135 ms, plus 9 ms per message.
  const Link& l = p->devices[0].link;
  EXPECT_NEAR(l.bandwidth_bps, 62e6, 0.2 * 62e6);
  // The probe paid the shaped 9 ms and both ends' CPU per message, which
  // the profile keeps apart (here both workers share one process, so each
  // end's CPU counts the other's too: only their sum is checked).
  EXPECT_GT(p->devices[0].send_cpu_s, 0);
  EXPECT_GT(p->devices[1].recv_cpu_s, 0);
  EXPECT_GT(l.latency_s + p->devices[0].send_cpu_s + p->devices[1].recv_cpu_s,
            0.009);
  EXPECT_LT(l.latency_s, 0.05);
  const Tensor in = RandomInput(served->input_shape, 1);
  Tensor out;
  EXPECT_TRUE((*coord)->Run(in, &out, nullptr, 1).ok());
  // Per byte, through one-task plans on each worker: copying and framing
  // 1 MiB costs something, and far less than 100 ms.
  for (const auto& d : p->devices) {
    EXPECT_GT(d.recv_cpu_per_byte_s, 0) << d.name;
    EXPECT_GT(d.send_cpu_per_byte_s, 0) << d.name;
    EXPECT_LT(d.recv_cpu_per_byte_s, 1e-7) << d.name;
    EXPECT_LT(d.send_cpu_per_byte_s, 1e-7) << d.name;
  }
  // The unshaped one is far faster. Compared with the shaped link's own
  // probes, not with an absolute rate: loopback gRPC on a host busy with
  // other tests moved 1 MiB at under 500 Mbit/s.
  const Link& u = p->devices[1].link;
  EXPECT_TRUE(u.bandwidth_bps == 0 || u.bandwidth_bps > 3 * l.bandwidth_bps)
      << u.bandwidth_bps << " against " << l.bandwidth_bps;
  EXPECT_LT(u.latency_s, l.latency_s);
  auto lm = LatencyModel::FromProfile(c, *p);
  ASSERT_TRUE(lm.ok()) << lm.status().message();
  EXPECT_GT(lm->GraphSeconds(0, m->graph).value(), 0);

  // A device that does not answer is named.
  c.devices[1].address = "127.0.0.1:1";
  auto bad = ProfileCluster(c, *variants, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("w1"), std::string::npos);
}

}  // namespace
}  // namespace shoal
