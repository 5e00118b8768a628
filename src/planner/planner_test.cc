// The auto planner: Procedure 1, the joint MILP, the fallback, memory, the
// objectives, and that auto is never predicted worse than what it compared.
#include <gtest/gtest.h>

#include <set>

#include "models/builder.h"
#include "models/load_model.h"
#include "models/zoo.h"
#include "partition/plan_test_util.h"
#include "plan/broadcast.h"
#include "plan/plan_cost.h"
#include "plan/plan_print.h"
#include "planner/assignment_plan.h"
#include "planner/joint_milp.h"
#include "planner/predict.h"
#include "planner/procedure1.h"
#include "sim/simulator.h"

namespace shoal {
namespace {

Cluster MakeCluster(const std::vector<double>& speeds, int64_t memory,
                    double bandwidth_bps, double latency_s) {
  Cluster c;
  for (size_t i = 0; i < speeds.size(); ++i) {
    DeviceSpec d;
    d.name = "dev" + std::to_string(i);
    d.speed = speeds[i];
    d.memory_bytes = memory;
    d.link = Link{bandwidth_bps, latency_s};
    c.devices.push_back(d);
  }
  return c;
}

PlanOptions AutoOptions(const Cluster& c, const std::string& model) {
  PlanOptions po;
  po.strategy = "auto";
  po.devices = c.PlanDevices();
  po.model.spec = model;
  po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(c));
  return po;
}

// fc layers of equal size: a chain whose layers cost the same.
Model FcChain(int layers, int64_t width) {
  GraphBuilder b("fc-chain");
  std::string x = b.Input("x", {1, width});
  for (int i = 0; i < layers; ++i)
    x = b.Relu(b.Linear("fc" + std::to_string(i), x, width));
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 5);
  return m;
}

// A cheap conv, a heavy conv, then a small classifier.
Model HeavyConv() {
  GraphBuilder b("heavy-conv");
  std::string x = b.Input("x", {1, 3, 16, 16});
  x = b.Relu(b.Conv("conv1", x, 16, 3, 1, 1));
  x = b.Relu(b.Conv("heavy", x, 128, 3, 1, 1));
  x = b.Flatten(b.GlobalAvgPool(x));
  x = b.Linear("fc", x, 10);
  Model m;
  m.graph = b.Finish({x}).value();
  m.weights = RandomWeights(m.graph, 6);
  return m;
}

Model Zoo(const std::string& name) {
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  return LoadModel(name, lo).value();
}

int UnitOf(const std::vector<PlanUnit>& units, const std::string& node) {
  for (size_t u = 0; u < units.size(); ++u) {
    for (const auto& n : units[u].nodes)
      if (n == node) return static_cast<int>(u);
  }
  return -1;
}

TEST(Procedure1, SplitsALayerThatFitsNoDevice) {
  const Model m = FcChain(3, 512);  // 1 MiB of weights per layer
  const Cluster c = MakeCluster({1, 1, 1, 1}, 1800 << 10, 0, 0);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  auto h = Procedure1(pr, PlanObjective::kLatency);
  ASSERT_TRUE(h.ok()) << h.status().message();
  for (const char* layer : {"fc0", "fc1", "fc2"}) {
    const Placement& p = h->assignment[UnitOf(units, layer)];
    EXPECT_NE(p.form, Form::kWhole) << layer;
    EXPECT_GE(p.devices.size(), 2u) << layer;
    EXPECT_NE(h->reasons[UnitOf(units, layer)].find("fit no device"),
              std::string::npos);
  }
  // And the auto plan built from it fits and runs exactly.
  PlanOptions po = AutoOptions(c, "fc-chain");
  testing::PlanRunResult r;
  ASSERT_TRUE(testing::RunPlanExact(m, po, &r));
  EXPECT_TRUE(CheckPlanMemory(r.plan, m.graph).ok());
}

// The model input sent from the hub to strips on 8 devices: the hub's
// messages leave together, so it pays one link latency and the bytes of
// all (not seven latencies); an image input is a byte a value; with LZ4 a
// ReLU's output, max pooled, is priced at kPooledWireFraction, and f16 at
// half.
TEST(Placements, TransitionsPayOneLatencyAndTheWireBytes) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  const Model m = LoadModel("alexnet", lo).value();
  const double bw = 62e6, lat = 9e-3;
  const Cluster c = MakeCluster(std::vector<double>(8, 1.0), 0, bw, lat);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  const Placement strips{Form::kSpatial, {0, 1, 2, 3, 4, 5, 6, 7}};
  const double floats = pr.Transition(0, nullptr, strips).seconds;
  // 7/8 of 224x224x3 floats (and halos) through one 62 Mbit/s link.
  const double bytes_s = 7.0 / 8 * 224 * 224 * 3 * 4 * 8 / bw;
  EXPECT_GT(floats, lat + bytes_s);
  EXPECT_LT(floats, 2 * lat + 1.2 * bytes_s);
  pr.SetWire(WireSettings{}, /*input_pixels=*/true);
  const double pixels = pr.Transition(0, nullptr, strips).seconds;
  EXPECT_NEAR(pixels - lat, (floats - lat) / 4, 1e-3);

  // Unit 0 (conv, ReLU, max pool) whole on the hub, then strips: its
  // output is sparse, though less so after the pool.
  const Placement hub{Form::kWhole, {0}};
  pr.SetWire(WireSettings{}, false);
  const double f32 = pr.Transition(1, &hub, strips).seconds - lat;
  pr.SetWire(WireSettings{WireDtype::kF32, true}, false);
  const double lz4 = pr.Transition(1, &hub, strips).seconds - lat;
  pr.SetWire(WireSettings{WireDtype::kF16, false}, false);
  const double f16 = pr.Transition(1, &hub, strips).seconds - lat;
  EXPECT_NEAR(lz4, f32 * kPooledWireFraction, 1e-4);
  EXPECT_NEAR(f16, f32 / 2, 1e-4);
}

TEST(Placements, AUnitWholeMustFitWhileItsWeightIsReordered) {
  // 1 MiB of weights on 1.5 MiB devices: under the memory, but once more
  // while reordered it needs 2 MiB, which CheckPlanMemory refuses; the
  // pricer refuses it too, so auto splits the layer, and its plan fits.
  const Model m = FcChain(1, 512);
  const Cluster c = MakeCluster({1, 1}, 1536 << 10, 0, 0);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  const Load whole = pr.Price(UnitOf(units, "fc0"), {Form::kWhole, {0}});
  EXPECT_FALSE(whole.ok);
  EXPECT_NE(whole.why.find("reordered"), std::string::npos) << whole.why;
  EXPECT_TRUE(pr.Price(UnitOf(units, "fc0"), {Form::kLop, {0, 1}}).ok);
  for (const PlanObjective objective :
       {PlanObjective::kLatency, PlanObjective::kThroughput}) {
    PlanOptions po = AutoOptions(c, "fc-chain");
    po.objective = objective;
    testing::PlanRunResult r;
    ASSERT_TRUE(testing::RunPlanExact(m, po, &r)) << ObjectiveName(objective);
    EXPECT_TRUE(CheckPlanMemory(r.plan, m.graph).ok())
        << ObjectiveName(objective);
  }
}

TEST(Placements, ReservedRoomComesOffTheMemory) {
  const Model m = FcChain(1, 512);
  const Cluster c = MakeCluster({1, 1}, 4608 << 10, 0, 0);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  EXPECT_EQ(pr.Capacity(1), 4608 << 10);
  pr.Reserve(1, 1 << 20);
  pr.Reserve(1, 1 << 10);  // reservations only grow
  EXPECT_EQ(pr.Reserved(1), 1 << 20);
  EXPECT_EQ(pr.Capacity(1), 3584 << 10);
  EXPECT_EQ(pr.Capacity(0), 4608 << 10);
  pr.Reserve(0, 8 << 20);  // more than the memory: still limited
  EXPECT_EQ(pr.Capacity(0), 1);
  const Cluster unlimited = MakeCluster({1}, 0, 0, 0);
  const LatencyModel lu = LatencyModel::FromCluster(unlimited);
  UnitPricer pu(m.graph, units, lu, 0);
  pu.Reserve(0, 1 << 20);
  EXPECT_EQ(pu.Capacity(0), 0);
}

TEST(Auto, PlansAgainWithRoomToReorderWhereAPlanOverflows) {
  // Layers of 1 MiB on devices of 4.5 MiB: four whole layers are under a
  // device's memory (what the planners' sums allow) but need 4 MiB + 1 MiB
  // while the larger is reordered (CheckPlanMemory). Without another try,
  // every MILP and Procedure 1 plan that stacks four layers is dropped; the
  // MILP plans again keeping that 1 MiB free, and its plan fits.
  const Model m = FcChain(5, 512);
  const Cluster c = MakeCluster({1, 1, 1, 1}, 4608 << 10, 62e6, 9e-3);
  PlanOptions po = AutoOptions(c, "fc-chain");
  testing::PlanRunResult r;
  ASSERT_TRUE(testing::RunPlanExact(m, po, &r));
  EXPECT_TRUE(CheckPlanMemory(r.plan, m.graph).ok());
  bool milp_replanned = false;
  for (const auto& a : r.plan.prediction->alternatives) {
    if (a.name != "milp") continue;
    EXPECT_GT(a.latency_s, 0) << a.note;
    milp_replanned = a.note.find("keeping room on") != std::string::npos;
  }
  EXPECT_TRUE(milp_replanned);
}

TEST(Procedure1, NoGroupHoldsTheLayerNamesIt) {
  const Model m = FcChain(2, 512);
  const Cluster c = MakeCluster({1, 1}, 300 << 10, 0, 0);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  auto h = Procedure1(pr, PlanObjective::kLatency);
  ASSERT_FALSE(h.ok());
  EXPECT_NE(h.status().message().find("layer fc0"), std::string::npos)
      << h.status().message();
  EXPECT_NE(h.status().message().find("MiB"), std::string::npos);
}

TEST(Procedure1, EqualDevicesGetBalancedStages) {
  const Model m = FcChain(8, 256);
  const Cluster c = MakeCluster({1, 1, 1, 1}, 0, 0, 0);
  auto units = MakeUnits(m.graph).value();
  ASSERT_EQ(units.size(), 8u);  // each fc with its relu
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  const Assignment a = BalancedStages(
      pr, {0, 1, 2, 3}, std::vector<Placement>(8, {Form::kWhole, {-1}}));
  ASSERT_EQ(a.size(), 8u);
  std::map<int, double> stage;
  for (int u = 0; u < 8; ++u) {
    ASSERT_EQ(a[u].form, Form::kWhole);
    stage[a[u].devices[0]] += pr.Price(u, a[u]).seconds;
  }
  ASSERT_EQ(stage.size(), 4u);
  for (const auto& [d, s] : stage) EXPECT_NEAR(s, stage[0], 1e-9) << d;
  // Procedure 1 for throughput uses every device, one stage each.
  auto h = Procedure1(pr, PlanObjective::kThroughput);
  ASSERT_TRUE(h.ok());
  std::set<int> used;
  for (const auto& p : h->assignment)
    used.insert(p.devices.begin(), p.devices.end());
  EXPECT_EQ(used.size(), 4u);
}

// Step 2 groups whole layers and their split versions: a conv heavier
// than everything else together gets devices of its own, split, rather than
// one stage that every other stage waits for.
TEST(Procedure1, Step2UsesASplitVersionOfALayerTooHeavyForOneStage) {
  const Model m = HeavyConv();
  const Cluster c = MakeCluster({1, 1, 1, 1}, 0, 1e9, 1e-4);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  const int heavy = UnitOf(units, "heavy");
  const std::vector<Placement> none(units.size(), {Form::kWhole, {-1}});
  const Assignment a = BalancedStages(pr, {0, 1, 2, 3}, none);
  ASSERT_EQ(a.size(), units.size());
  EXPECT_NE(a[heavy].form, Form::kWhole);
  EXPECT_GE(a[heavy].devices.size(), 2u);
  // Its stage is faster than the layer whole.
  EXPECT_LT(pr.Price(heavy, a[heavy]).seconds,
            pr.Price(heavy, Placement{Form::kWhole, {1}}).seconds);
  // On one device there is nothing to split over.
  const Assignment one = BalancedStages(pr, {0}, none);
  ASSERT_EQ(one.size(), units.size());
  for (const auto& p : one) EXPECT_EQ(p.form, Form::kWhole);
}

TEST(JointMilp, PicksTheFasterDeviceForTheHeavyLayer) {
  const Model m = HeavyConv();
  // Device 0 (the hub, holding the input) is slow; device 1 is 4x faster.
  const Cluster c = MakeCluster({1, 4}, 0, 100e6, 1e-3);
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  auto r = SolveJointMilp(pr, MilpOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->proven_optimal);
  const Placement& p = r->assignment[UnitOf(units, "heavy")];
  ASSERT_FALSE(p.devices.empty());
  if (p.form == Form::kWhole) {
    EXPECT_EQ(p.devices[0], 1);
  } else {
    // Split: the fast device takes the larger part.
    EXPECT_EQ(SpeedOrder(lm, 0)[0], 1);
    EXPECT_EQ(p.devices[0], 1);
  }
  // The objective is the cost model's estimate of the chosen assignment.
  const Estimate e = EstimateAssignment(pr, r->assignment);
  EXPECT_NEAR(r->objective, e.latency_s, 1e-9);
  // On a slow link it runs everything where the input is.
  const Cluster slow = MakeCluster({1, 4}, 0, 1e5, 0.05);
  const LatencyModel lms = LatencyModel::FromCluster(slow);
  UnitPricer prs(m.graph, units, lms, 0);
  auto rs = SolveJointMilp(prs, MilpOptions{});
  ASSERT_TRUE(rs.ok());
  for (const auto& q : rs->assignment) {
    EXPECT_EQ(q.form, Form::kWhole);
    EXPECT_EQ(q.devices[0], 0);
  }
}

TEST(JointMilp, EqualDevicesFormClassesAndTheHubStandsAlone) {
  Cluster c = MakeCluster({1, 1, 4, 4, 2, 4}, 1 << 30, 62e6, 9e-3);
  c.devices[5].link = Link{1e9, 4e-4};  // a fast device on a faster link
  const LatencyModel lm = LatencyModel::FromCluster(c);
  const DeviceClasses dc = ClassifyDevices(lm, 0);
  ASSERT_EQ(dc.members.size(), 5u);
  EXPECT_EQ(dc.members[dc.of[0]], std::vector<int>{0});
  EXPECT_EQ(dc.of[2], dc.of[3]);
  EXPECT_EQ(dc.members[dc.of[2]], (std::vector<int>{2, 3}));
  EXPECT_NE(dc.of[5], dc.of[2]);
  EXPECT_NE(dc.of[1], dc.of[0]);
  EXPECT_NE(dc.of[4], dc.of[1]);
}

// Weights that need four of the fastest devices, on many equal devices:
// with one variable per class of equal devices the MILP is solved to
// optimality (over every device separately it finds nothing in 20 s at 12
// devices), each device holds what fits it, and its optimum is no worse
// than Procedure 1's answer.
TEST(JointMilp, ClassesOfEqualDevicesSolveAMemoryBoundChain) {
  const Model m = FcChain(20, 256);
  auto units = MakeUnits(m.graph).value();
  int64_t layer = 0;
  for (const auto& u : units) layer = std::max(layer, u.weight_bytes);
  // Each device's weight capacity (its memory) holds 5 layers, the plan's
  // own rule (once, and the largest once more while reordered) 4.
  const int64_t memory = 5 * layer + layer / 4;
  std::vector<double> speeds;
  for (int i = 0; i < 300; ++i) speeds.push_back(double(1 << (i % 3)));
  const Cluster c = MakeCluster(speeds, memory, 62e6, 9e-3);
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  auto r = SolveJointMilp(pr, MilpOptions{});
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->proven_optimal) << r->status;
  EXPECT_EQ(r->classes, 4) << "the hub, and speeds 1, 2, 4";
  std::map<int, int64_t> held;
  for (size_t u = 0; u < units.size(); ++u) {
    for (const auto& [d, w] : pr.Price(int(u), r->assignment[u]).weights)
      held[d] += w;
  }
  for (const auto& [d, w] : held) {
    EXPECT_LE(w, WeightCapacity(memory)) << "device " << d;
    // Packed over a class by the plan's rule; the hub, a class of one,
    // keeps the MILP's row (auto plans again where that overflows).
    if (d != 0) {
      EXPECT_LE(DeviceWeightMemory(w, layer), memory) << "device " << d;
    }
  }
  EXPECT_GE(held.size(), 4u);
  auto h = Procedure1(pr, PlanObjective::kLatency);
  ASSERT_TRUE(h.ok()) << h.status().message();
  // Procedure 1's stages are a solution of the class MILP too (hops priced
  // at no more than they cost), so the optimum is no worse.
  EXPECT_LE(r->objective, EstimateAssignment(pr, h->assignment).latency_s);
  // Below the cap, devices keep their own variables.
  const Cluster few = MakeCluster({1, 4, 4}, 1 << 30, 62e6, 9e-3);
  const LatencyModel lmf = LatencyModel::FromCluster(few);
  UnitPricer prf(m.graph, units, lmf, 0);
  auto rf = SolveJointMilp(prf, MilpOptions{});
  ASSERT_TRUE(rf.ok()) << rf.status().message();
  EXPECT_EQ(rf->classes, 0);
}

TEST(Auto, TimeLimitZeroFallsBackAndSaysSo) {
  const Model m = Zoo("lenet5");
  const Cluster c = MakeCluster({2, 1, 1}, 0, 62e6, 9e-3);
  for (double limit : {0.0, 1e-9}) {
    PlanOptions po = AutoOptions(c, "lenet5");
    po.ilp_time_limit_s = limit;
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << p.status().message();
    ASSERT_TRUE(p->prediction.has_value());
    EXPECT_NE(p->prediction->solver.find("fell back to Procedure 1"),
              std::string::npos)
        << p->prediction->solver;
    ASSERT_FALSE(p->decisions.empty());
    EXPECT_EQ(p->decisions[0].scheme, "auto");
    EXPECT_NE(p->decisions[0].reason.find("fell back"), std::string::npos);
    EXPECT_NE(p->prediction->method, "milp");
  }
}

TEST(Auto, RespectsMemory) {
  // vgg-like fc weights that no single device holds: every plan auto may
  // pick must fit, and the strategies that do not fit say so.
  const Model m = FcChain(4, 512);
  const Cluster c = MakeCluster({3, 1, 1, 1}, 7 << 19, 62e6, 9e-3);
  PlanOptions po = AutoOptions(c, "fc-chain");
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(CheckPlanMemory(p.value(), m.graph).ok());
  bool some_did_not_fit = false;
  for (const auto& a : p->prediction->alternatives) {
    some_did_not_fit |= a.note.find("does not fit") != std::string::npos;
  }
  EXPECT_TRUE(some_did_not_fit);  // e.g. pipeline with 2 layers per stage
}

TEST(Auto, EveryCandidateBuildsOnAResidualNetwork) {
  // The MILP put ResNet-18's stem and first conv on the same strips and
  // joined them into one chain, whose middle output (the block's shortcut)
  // no other task could then read.
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  Model m;
  m.graph = LoadModel("resnet18", lo).value().graph;
  const Cluster c =
      MakeCluster(std::vector<double>(8, 1.0), int64_t{1} << 30, 62e6, 9e-3);
  PlanOptions po = AutoOptions(c, "resnet18");
  po.input_pixels = true;
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  for (const auto& a : p->prediction->alternatives) {
    if (a.name == "milp" || a.name == "procedure1" ||
        a.name.rfind("spatial", 0) == 0) {
      EXPECT_GT(a.latency_s, 0) << a.name << ": " << a.note;
    }
  }
}

// Links so slow that every split costs more than it saves: auto keeps the
// model on one device, never predicting worse than the fastest alone.
TEST(Auto, NeverSlowerThanTheFastestDeviceAlone) {
  const Model m = Zoo("lenet5");
  const Cluster c = MakeCluster({1, 4, 1}, 0, 10e3, 0.5);
  PlanOptions po = AutoOptions(c, "lenet5");
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const PlanPrediction& pred = *p->prediction;
  double alone = 0;
  for (const auto& a : pred.alternatives) {
    if (a.name == "one-device") alone = a.latency_s;
  }
  ASSERT_GT(alone, 0) << "one-device is a candidate";
  EXPECT_LE(pred.latency_s, alone);
  // One device does it all (the input's, whose link the input crosses
  // anyway, or the fastest).
  std::set<int> used;
  for (const auto& t : p->tasks)
    used.insert(t.devices.begin(), t.devices.end());
  EXPECT_EQ(used.size(), 1u);
}

TEST(Auto, ThroughputObjectiveDiffersFromLatency) {
  // Equal layers on equal devices over a slow link: one device is fastest
  // for one request; a pipeline (or replicas) serves more requests.
  const Model m = FcChain(8, 512);
  // Slow devices: compute outweighs the links' 9 ms (16 ms a layer, most
  // of it reading the layer's 1 MiB of weights).
  const Cluster c = MakeCluster({0.064, 0.064, 0.064, 0.064}, 0, 62e6, 9e-3);
  PlanOptions lat = AutoOptions(c, "fc-chain");
  PlanOptions thr = lat;
  thr.objective = PlanObjective::kThroughput;
  auto pl = MakePlan(m.graph, lat);
  auto pt = MakePlan(m.graph, thr);
  ASSERT_TRUE(pl.ok() && pt.ok());
  const auto& a = *pl->prediction;
  const auto& b = *pt->prediction;
  EXPECT_LE(a.latency_s, b.latency_s);
  std::ostringstream why;
  PrintPrediction(a, why);
  PrintPrediction(b, why);
  for (const auto& d : pt->decisions)
    why << d.layer << " " << d.scheme << " " << d.reason << "\n";
  // Both simulated at 4 in flight: the latency plan (whichever method
  // won it) is among the throughput plan's alternatives; a single
  // strategy's plan is the same under either objective.
  const bool solver = a.method == "milp" || a.method == "procedure1";
  double latency_plans_rps = 0;
  for (const auto& alt : b.alternatives)
    if (alt.name == (solver ? a.method + "-latency" : a.method))
      latency_plans_rps = alt.throughput_rps;
  ASSERT_GT(latency_plans_rps, 0) << why.str();
  // Each objective picks a different plan, better by its own measure.
  EXPECT_GT(b.throughput_rps, latency_plans_rps) << why.str();
  EXPECT_LT(a.latency_s, b.latency_s) << why.str();
  EXPECT_EQ(b.objective, "throughput");
  testing::PlanRunResult r;
  EXPECT_TRUE(testing::RunPlanExact(m, thr, &r));
}

TEST(Auto, ThroughputIsJudgedAtTheRequestsInFlight) {
  // With one request in flight throughput is 1 / latency, so the plan for
  // throughput at concurrency 1 must serve at least as many requests as
  // the latency plan; with one per device in flight replicas win. Slow
  // links (1 Mbit/s) keep one request on one device.
  const Model m = FcChain(8, 512);
  const Cluster c = MakeCluster({0.064, 0.064, 0.064, 0.064}, 0, 1e6, 20e-3);
  PlanOptions lat = AutoOptions(c, "fc-chain");
  PlanOptions one = lat, full = lat;
  one.objective = full.objective = PlanObjective::kThroughput;
  one.concurrency = 1;
  auto pl = MakePlan(m.graph, lat);
  auto p1 = MakePlan(m.graph, one);
  auto pf = MakePlan(m.graph, full);
  ASSERT_TRUE(pl.ok() && p1.ok() && pf.ok());
  EXPECT_EQ(p1->prediction->concurrency, 1);
  EXPECT_EQ(pf->prediction->concurrency, 4);
  const LatencyModel lm = LatencyModel::FromCluster(c);
  auto rps = [&](const Plan& p, int k) {
    SimOptions so;
    so.concurrency = k;
    so.requests = 8 * k + 8;
    auto r = Simulate(p, lm, so);
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? SteadyThroughput(*r, k) : 0.0;
  };
  std::ostringstream why;
  PrintPrediction(*p1->prediction, why);
  PrintPrediction(*pf->prediction, why);
  EXPECT_GE(rps(*p1, 1), rps(*pl, 1) * (1 - 1e-6)) << why.str();
  EXPECT_NE(p1->prediction->method, pf->prediction->method) << why.str();
  EXPECT_GT(rps(*pf, 4), 1.5 * rps(*p1, 4)) << why.str();
  EXPECT_GT(rps(*p1, 1), 1.2 * rps(*pf, 1)) << why.str();
  // The stored prediction is the simulated one.
  EXPECT_NEAR(p1->prediction->throughput_rps, rps(*p1, 1), 0.05 * rps(*p1, 1));
  // Latency plans compete for throughput too.
  bool saw = false;
  for (const auto& a : p1->prediction->alternatives)
    saw |= a.name == "milp-latency" && a.note.empty();
  EXPECT_TRUE(saw);
}

TEST(Auto, NeverPredictedWorseThanWhatItCompared) {
  const Cluster mixed = MakeCluster({16, 3, 1, 1}, 1 << 30, 62e6, 9e-3);
  for (const std::string name : {"lenet5", "cifarnet"}) {
    const Model m = Zoo(name);
    for (const std::string obj : {"latency", "throughput"}) {
      PlanOptions po = AutoOptions(mixed, name);
      po.objective = *ParseObjective(obj);
      testing::PlanRunResult r;
      ASSERT_TRUE(testing::RunPlanExact(m, po, &r)) << name << " " << obj;
      const PlanPrediction& pp = *r.plan.prediction;
      auto value = [&](double lat, double thr) {
        return obj == "latency" ? lat : 1 / thr;
      };
      const double mine = value(pp.latency_s, pp.throughput_rps);
      int compared = 0;
      for (const auto& a : pp.alternatives) {
        if (a.latency_s <= 0 || a.name == "random") continue;  // not compared
        ++compared;
        EXPECT_LE(mine, value(a.latency_s, a.throughput_rps) * (1 + 1e-9))
            << name << " " << obj << " vs " << a.name;
      }
      EXPECT_GE(compared, 5) << name;
      // The stored prediction is the plan's own.
      const LatencyModel lm = LatencyModel::FromCluster(mixed);
      auto again = PredictPlan(r.plan, lm);
      ASSERT_TRUE(again.ok());
      EXPECT_NEAR(again->latency_s, pp.latency_s, 1e-12);
    }
  }
}

// --broadcast auto: each candidate travels the way predicted fastest for
// it, so auto's plan is predicted no slower than the best plan auto makes
// with any one way pinned, and says which way it chose.
TEST(Auto, ChoosesHowEachCandidatesBroadcastsTravel) {
  const Cluster pis =
      MakeCluster(std::vector<double>(8, 1.0), int64_t{1} << 30, 62e6, 9e-3);
  const Model m = Zoo("alexnet");
  PlanOptions po = AutoOptions(pis, "alexnet");
  po.input_pixels = true;
  ASSERT_TRUE(po.broadcast_auto);  // the default
  auto chosen = MakePlan(m.graph, po);
  ASSERT_TRUE(chosen.ok()) << chosen.status().message();
  const double mine = chosen->prediction->latency_s;
  double pinned_best = 1e9;
  for (const std::string way : {"scatter", "tree", "chain", "direct"}) {
    PlanOptions one = AutoOptions(pis, "alexnet");
    one.input_pixels = true;
    const BroadcastSettings b = NamedBroadcast(way).value();
    one.broadcast_fanout = b.fanout;
    one.broadcast_scatter = b.scatter;
    one.broadcast_auto = false;
    auto p = MakePlan(m.graph, one);
    ASSERT_TRUE(p.ok()) << way << ": " << p.status().message();
    EXPECT_LE(mine, p->prediction->latency_s * (1 + 1e-9)) << way;
    pinned_best = std::min(pinned_best, p->prediction->latency_s);
  }
  EXPECT_NEAR(mine, pinned_best, 1e-9);
  // The plan travels the way it was priced, and says so.
  const LatencyModel lm = LatencyModel::FromCluster(pis);
  auto again = PredictPlan(*chosen, lm);
  ASSERT_TRUE(again.ok());
  EXPECT_NEAR(again->latency_s, mine, 1e-12);
  // A winner without a tensor that several devices read (fused segments
  // of strips on these links) has no way to choose; the candidates that
  // have one say theirs.
  const std::string why = chosen->decisions.front().reason;
  if (why.find("broadcasts ") != std::string::npos) {
    EXPECT_NE(why.find("broadcasts " + BroadcastName(chosen->broadcast)),
              std::string::npos)
        << why;
  }
  int said = 0;
  for (const auto& a : chosen->prediction->alternatives)
    said += a.note.find("broadcasts ") != std::string::npos;
  EXPECT_GT(said, 0);
  EXPECT_FALSE(NamedBroadcast("star").ok());
}

// At 1000 devices auto plans (how fast is measured by bench/sim_scale.sh,
// not asserted here) and says which strategies it did not compare.
TEST(Auto, HundredLayersOnAThousandDevicesSaysWhatItSkipped) {
  const Model m = FcChain(100, 64);
  const Cluster c =
      MakeCluster(std::vector<double>(1000, 1.0), 1 << 30, 62e6, 9e-3);
  for (const std::string obj : {"latency", "throughput"}) {
    PlanOptions po = AutoOptions(c, "fc-chain");
    po.objective = *ParseObjective(obj);
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << p.status().message();
    bool said = false;
    for (const auto& a : p->prediction->alternatives)
      said |= a.note.find("not compared: 1000 devices") != std::string::npos;
    EXPECT_TRUE(said) << obj;
  }
}

// The builder splits a layer over any group of devices, in any order, and
// the plan stays exact: every form on a group that leaves devices out.
TEST(Placements, EveryFormOnASubsetIsExact) {
  for (const std::string name : {"lenet5", "cifarnet"}) {
    const Model m = Zoo(name);
    const Cluster c = MakeCluster({1, 2, 3, 1}, 0, 62e6, 9e-3);
    PlanOptions po = AutoOptions(c, name);
    auto units = MakeUnits(m.graph).value();
    const LatencyModel lm = LatencyModel::FromCluster(c);
    UnitPricer pr(m.graph, units, lm, 0);
    const std::vector<int> group = {2, 1};
    for (Form f : {Form::kLop, Form::kLip, Form::kSpatial, Form::kFuse1,
                   Form::kReplicate}) {
      Assignment a;
      for (size_t u = 0; u < units.size(); ++u) {
        Placement p{Form::kWhole, {int(u % 4)}};
        const Placement want{f, group};
        if (f == Form::kFuse1 && u > 0 && a[u - 1].form == Form::kFuse1) {
          p = Placement{Form::kFuse2, group};
        } else if (pr.Price(int(u), want).ok &&
                   (f != Form::kFuse1 ||
                    (units[u].fusable_with_next &&
                     pr.Price(int(u) + 1, {Form::kFuse2, group}).ok))) {
          p = want;
        }
        a.push_back(p);
      }
      int used = 0;
      for (const auto& p : a) used += p.form == f;
      EXPECT_GT(used, 0) << name << " " << FormName(f);
      auto plan = PlanAssignment(m.graph, po, units, a,
                                 std::vector<std::string>(units.size(), "t"));
      ASSERT_TRUE(plan.ok())
          << name << " " << FormName(f) << ": " << plan.status().message();
      EXPECT_TRUE(testing::CheckPlanExact(m, std::move(plan).value(), nullptr))
          << name << " " << FormName(f);
    }
  }
}

TEST(Placements, ReplicasAreDealtBySpeedAndPricedSo) {
  // Replicas on a 4x and a 1x device: dealt equally the slow one would
  // queue; the plan deals 4 of every 5 requests to the fast one, and the
  // pricer charges each replica the share the plan gives it.
  const Model m = FcChain(4, 256);
  const Cluster c = MakeCluster({4, 1}, 0, 0, 0);
  PlanOptions po = AutoOptions(c, "fc-chain");
  auto units = MakeUnits(m.graph).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(m.graph, units, lm, 0);
  const std::vector<double> f = pr.ReplicaShares({0, 1});
  ASSERT_EQ(f.size(), 2u);
  EXPECT_DOUBLE_EQ(f[0], 0.8);
  EXPECT_DOUBLE_EQ(f[1], 0.2);
  const Assignment a(units.size(), Placement{Form::kReplicate, {0, 1}});
  const Estimate e = EstimateAssignment(pr, a);
  ASSERT_TRUE(e.ok) << e.why;
  auto plan = PlanAssignment(m.graph, po, units, a,
                             std::vector<std::string>(units.size(), "t"));
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  for (const auto& t : plan->tasks) {
    EXPECT_EQ(t.devices, (std::vector<int>{0, 0, 1, 0, 0})) << t.name;
  }
  // The fast device does 4x the requests at 4x the speed: both are busy
  // the same time per request, and the pricer and the plan's predictor
  // agree on it.
  auto predicted = PredictPlan(plan.value(), lm);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  const Prediction& pred = predicted.value();
  ASSERT_EQ(pred.compute_s.size(), 2u);
  EXPECT_NEAR(pred.compute_s[0], pred.compute_s[1], 1e-9);
  EXPECT_NEAR(e.period_s, pred.compute_s[0], 0.05 * e.period_s);
  EXPECT_TRUE(testing::CheckPlanExact(m, std::move(plan).value(), nullptr));
}

TEST(Predict, CriticalPathOfATwoStagePipeline) {
  const Model m = FcChain(2, 256);
  const Cluster c = MakeCluster({1, 1}, 0, 8e6, 1e-3);  // 1 MB/s
  PlanOptions po;
  po.strategy = "pipeline";
  po.devices = c.PlanDevices();
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok());
  const LatencyModel lm = LatencyModel::FromCluster(c);
  auto pr = PredictPlan(p.value(), lm);
  ASSERT_TRUE(pr.ok());
  // stage 0 computes, sends 256 floats (1 ms + 1024 B at 1 MB/s), stage 1
  // computes and is the output device.
  double s0 = 0, s1 = 0;
  for (const auto& t : p->tasks) {
    const double secs = lm.GraphSeconds(t.devices[0], t.fragment).value();
    (t.devices[0] == 0 ? s0 : s1) += secs;
  }
  EXPECT_NEAR(pr->latency_s, s0 + 1e-3 + 1024 / 1e6 + s1, 1e-9);
  EXPECT_NEAR(pr->throughput_rps, 1 / std::max({s0, s1, 1e-3 + 1024 / 1e6}),
              1e-6);
}

}  // namespace
}  // namespace shoal
