// The collaborative-execution paper's Pi 3s (board pi3-collab): Procedure 1
// splits the layers its framework cannot hold, and a deployment that does
// not fit pays for the paging in every prediction (cluster/swap.h).
#include <gtest/gtest.h>

#include "cluster/board.h"
#include "cluster/swap.h"
#include "models/zoo.h"
#include "partition/strategy.h"
#include "plan/plan_cost.h"
#include "planner/placement.h"
#include "planner/procedure1.h"
#include "planner/units.h"
#include "sim/simulator.h"

namespace shoal {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

Cluster Boards(const std::string& board, int n, int64_t memory = kGiB) {
  const BoardClass* b = FindBoard(board);
  EXPECT_NE(b, nullptr);
  Cluster c;
  for (int i = 0; i < n; ++i) {
    DeviceSpec d;
    d.name = "pi" + std::to_string(i);
    d.board = b;
    d.speed = RelativeSpeed(*b);
    d.cores = b->cores;
    d.memory_bytes = memory;
    d.link = Link{b->link_bandwidth_bps, b->link_latency_s};
    c.devices.push_back(d);
  }
  return c;
}

Graph Zoo(const std::string& name) {
  const ZooEntry* e = Zoo::Global().Find(name);
  EXPECT_NE(e, nullptr) << name;
  return e->build(e->input_shape).value();
}

Placement PlacementOf(const Graph& g, const Cluster& c, const std::string& n) {
  auto units = MakeUnits(g).value();
  const LatencyModel lm = LatencyModel::FromCluster(c);
  UnitPricer pr(g, units, lm, 0);
  auto h = Procedure1(pr, PlanObjective::kThroughput);
  EXPECT_TRUE(h.ok()) << h.status().message();
  if (!h.ok()) return {};
  for (size_t u = 0; u < units.size(); ++u) {
    for (const auto& node : units[u].nodes)
      if (node == n) return h->assignment[u];
  }
  ADD_FAILURE() << "no unit holds " << n;
  return {};
}

// "Since the first dense layer in AlexNet face limited memory issue, all
// of our distributions perform output splitting for this layer" (§6).
TEST(SwapPlan, Procedure1SplitsAlexNetsFirstDenseLayerOnThePapersPis) {
  const Graph g = Zoo("alexnet");
  // classifier.1 and .4: fc6 and fc7.
  const Placement fc6 = PlacementOf(g, Boards("pi3-collab", 4), "classifier.1");
  EXPECT_EQ(fc6.form, Form::kLop);
  EXPECT_GE(fc6.devices.size(), 2u);
  EXPECT_EQ(PlacementOf(g, Boards("pi3-collab", 4), "classifier.4").form,
            Form::kWhole);
  // shoal's own worker holds fc6's 144 MiB once: on its Pi 3B+ it fits.
  EXPECT_EQ(PlacementOf(g, Boards("pi3b+", 4), "classifier.1").form,
            Form::kWhole);
  // And the paper's board given 4 GiB does not need the split either.
  EXPECT_EQ(
      PlacementOf(g, Boards("pi3-collab", 4, 4 * kGiB), "classifier.1").form,
      Form::kWhole);
}

StatusOr<double> Latency(const std::string& model, const Cluster& c,
                         const std::string& strategy) {
  PlanOptions po;
  po.strategy = strategy;
  po.devices = c.PlanDevices();
  po.model.spec = model;
  auto lm = std::make_shared<LatencyModel>(LatencyModel::FromCluster(c));
  po.latency = lm;
  ASSIGN_OR_RETURN(Plan p, MakePlan(Zoo(model), po));
  SimOptions so;
  so.requests = 2;
  ASSIGN_OR_RETURN(SimResult r, Simulate(p, *lm, so));
  double sum = 0;
  for (double ms : r.latency_ms) sum += ms;
  return sum / r.latency_ms.size() / 1e3;
}

// One 1 GB Pi holding all of VGG16 pages most of it back in for every
// image, so eight that each hold their share are more than eight times as
// fast: the paper's super-linear speed-ups. With enough memory one Pi does
// not swap, and the speed-up is below eight again.
TEST(SwapPlan, OnePiRunningVgg16SwapsAndEightAreSuperLinear) {
  auto one = Latency("vgg16", Boards("pi3-collab", 1), "random");
  ASSERT_TRUE(one.ok()) << one.status().message();
  auto roomy = Latency("vgg16", Boards("pi3-collab", 1, 4 * kGiB), "random");
  ASSERT_TRUE(roomy.ok()) << roomy.status().message();
  EXPECT_GT(*one, *roomy + 60);  // minutes of paging
  auto eight = Latency("vgg16", Boards("pi3-collab", 8), "procedure1");
  ASSERT_TRUE(eight.ok()) << eight.status().message();
  EXPECT_GT(*one / *eight, 8);
  EXPECT_LT(*roomy / *eight, 8);
}

// A board that swaps is not refused a deployment larger than its memory:
// VGG16's 528 MiB of weights on a 512 MiB board plan, and pay for it.
TEST(SwapPlan, ADeploymentLargerThanTheBoardIsPricedNotRefused) {
  const Cluster small = Boards("pi3-collab", 1, int64_t{512} << 20);
  PlanOptions po;
  po.strategy = "random";
  po.devices = small.PlanDevices();
  po.model.spec = "vgg16";
  auto lm = std::make_shared<LatencyModel>(LatencyModel::FromCluster(small));
  po.latency = lm;
  const Graph g = Zoo("vgg16");
  auto p = MakePlan(g, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_TRUE(CheckPlanMemory(*p, g).ok());
  auto big = Latency("vgg16", Boards("pi3-collab", 1), "random");
  auto tight = Latency("vgg16", small, "random");
  ASSERT_TRUE(big.ok() && tight.ok());
  // Half a GiB less memory: half a GiB more paged, at 4 MiB/s.
  EXPECT_NEAR(*tight - *big, 512.0 / 4, 1);
  // The same board as shoal's worker holds it is refused.
  const Cluster own = Boards("pi3b+", 1, int64_t{512} << 20);
  po.devices = own.PlanDevices();
  po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(own));
  auto q = MakePlan(g, po);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_FALSE(CheckPlanMemory(*q, g).ok());
}

}  // namespace
}  // namespace shoal
