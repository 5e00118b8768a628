// The planner never aborts: every model of the ONNX coverage set (exported
// from torchvision at test time) is planned by every strategy on 2 to 8
// equal devices, and by `auto` for latency and for throughput on 2 to 8
// devices and on every example cluster. Each plan either verifies (and
// fits the devices' memory) or is refused with a message; an abort, an
// exception or an empty message fails the test.
#include <gtest/gtest.h>

#include <exception>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cli/plan_common.h"
#include "cluster/cluster.h"
#include "lcp/find_classifier.h"
#include "lcp/split_branches.h"
#include "onnx/onnx_test_util.h"
#include "partition/strategy.h"
#include "plan/plan_cost.h"
#include "plan/plan_verify.h"
#include "planner/cluster_split.h"
#include "sim/latency_model.h"

namespace shoal {
namespace {

using onnx_test::RunCommand;
using onnx_test::TempDir;

// docs/models.md's coverage set and the opset each is tested at, in two
// parts: one model of each family in `make test` (about 3 minutes of one
// core), the large ones in `make test-sweep` (CoverageSweep/*, about 14
// minutes more; a full sweep, as docs/testing.md keeps out of make test).
const std::vector<std::string> kCoverage = {
    "squeezenet1_1:13",
    "mobilenet_v3_small:13",
    "efficientnet_b0:13",
    "lraspp_mobilenet_v3_large:17",
    // A detection backbone, every feature map flattened into one output.
    "ssdlite320_mobilenet_v3_large:17",
};
const std::vector<std::string> kCoverageSweep = {
    "mobilenet_v3_large:17",
    "convnext_tiny:17",
    "vit_b_16:17",
    "swin_t:17",
    "maxvit_t:17",
    "deeplabv3_mobilenet_v3_large:17",
    "fcn_resnet50:17",
    // fcos_resnet50_fpn's backbone is retinanet's.
    "fasterrcnn_mobilenet_v3_large_fpn:17",
    "fasterrcnn_resnet50_fpn:17",
    "retinanet_resnet50_fpn:17",
    "ssd300_vgg16:17",
};

std::string Tag(std::string spec) {
  for (auto& c : spec)
    if (c == ':') c = '_';
  return spec;
}

// Plans `g` and checks the outcome; returns "" or what went wrong, and
// sets *made when a plan came out (else it was refused).
std::string PlanOnce(const Graph& g, const ModelRef& ref, const Cluster& c,
                     const std::string& strategy, const std::string& objective,
                     bool* made) {
  *made = false;
  PlanOptions po;
  po.strategy = strategy;
  po.objective = *ParseObjective(objective);
  po.devices = c.PlanDevices();
  po.latency = std::make_shared<LatencyModel>(LatencyModel::FromCluster(c));
  po.link_rates = c.UplinkRates();
  po.link_latency_s = c.MaxLinkLatency();
  po.model = ref;
  // The ILPs stop at their best so far: the sweep is about outcomes.
  po.ilp_time_limit_s = 2;
  try {
    // lcp of a model without branches: as `shoal plan` does, the Splitter
    // sizes branches for the devices and the model is rebuilt with them.
    Model split;
    const Graph* planned = &g;
    if (strategy == "lcp" && !HasLcpBranches(g) && FindClassifier(g).ok()) {
      StatusOr<ClusterSplitResult> r = SplitForCluster(g, c, 0);
      if (!r.ok()) {
        return r.status().message().empty() ? "split refused, no message" : "";
      }
      po.model.lcp_branches = r->split.summary.branches;
      po.model.lcp_shares = r->split.summary.shares;
      StatusOr<Model> m = LoadPlanModel(po.model, false);
      if (!m.ok()) {
        return m.status().message().empty() ? "rebuild refused, no message"
                                            : "";
      }
      split = std::move(*m);
      planned = &split.graph;
    }
    StatusOr<Plan> p = MakePlan(*planned, po);
    if (!p.ok()) {
      return p.status().message().empty() ? "refused without a message" : "";
    }
    Status v = VerifyPlan(*p);
    if (!v.ok()) return "plan does not verify: " + v.ToString();
    Status mem = CheckPlanMemory(*p, *planned);
    // Not fitting is a refusal with a message, as `shoal plan` gives it.
    if (!mem.ok() && mem.message().empty()) return "memory check, no message";
    *made = mem.ok();
  } catch (const std::exception& e) {
    return std::string("exception: ") + e.what();
  }
  return "";
}

class PlanSweep : public ::testing::TestWithParam<std::string> {};

TEST_P(PlanSweep, EveryStrategyPlansOrRefuses) {
  TempDir dir;
  const std::string spec = GetParam(), tag = Tag(spec);
  std::string out;
  const int rc = RunCommand(onnx_test::PyScript("export_torchvision.py") + " " +
                                dir.path() + " " + spec,
                            &out);
  if (rc == onnx_test::kPythonSkip) GTEST_SKIP() << "torch missing: " << out;
  ASSERT_EQ(rc, 0) << out;
  ModelRef ref;
  ref.spec = dir.File(tag + ".onnx");
  StatusOr<Model> m = LoadPlanModel(ref, false);
  ASSERT_TRUE(m.ok()) << m.status().ToString();

  std::vector<std::pair<std::string, Cluster>> clusters;
  for (int n = 2; n <= 8; ++n)
    clusters.push_back({std::to_string(n) + " devices", EqualCluster(n)});
  std::vector<std::pair<std::string, Cluster>> examples;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(SHOAL_SOURCE_DIR) + "/examples")) {
    if (e.path().extension() != ".yaml") continue;
    StatusOr<Cluster> c = LoadCluster(e.path().string());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    examples.push_back({e.path().filename().string(), *c});
  }
  ASSERT_FALSE(examples.empty());

  int planned = 0, refused = 0;
  auto check = [&](const std::string& where, const Cluster& c,
                   const std::string& strategy, const std::string& objective) {
    bool made = false;
    const std::string bad =
        PlanOnce(m->graph, ref, c, strategy, objective, &made);
    EXPECT_EQ(bad, "") << spec << ", " << strategy << " (" << objective << "), "
                       << where;
    ++(made ? planned : refused);
  };
  for (const auto& strategy : StrategyNames()) {
    if (strategy == "auto") continue;
    for (const auto& [where, c] : clusters)
      check(where, c, strategy, "latency");
  }
  for (const char* objective : {"latency", "throughput"}) {
    for (const auto& [where, c] : clusters) check(where, c, "auto", objective);
    for (const auto& [where, c] : examples) check(where, c, "auto", objective);
  }
  EXPECT_GT(planned, 0);
  std::cout << spec << ": " << planned << " plans, " << refused
            << " refusals\n";
}

INSTANTIATE_TEST_SUITE_P(Coverage, PlanSweep, ::testing::ValuesIn(kCoverage),
                         [](const auto& info) { return Tag(info.param); });
INSTANTIATE_TEST_SUITE_P(CoverageSweep, PlanSweep,
                         ::testing::ValuesIn(kCoverageSweep),
                         [](const auto& info) { return Tag(info.param); });

}  // namespace
}  // namespace shoal
