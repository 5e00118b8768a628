// A transformer split by heads (partition/heads_split.cc) over workers on
// 127.0.0.1, real gRPC between them: each device's heads, its MLP
// columns, the reduce-scatters and the all-gathers before LayerNorm run as
// deployed and give the one-device output.
#include <gtest/gtest.h>

#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "partition/plan_test_util.h"
#include "partition/strategy.h"
#include "partition/vit_test_model.h"
#include "runtime/coordinator.h"
#include "runtime/runtime_test_util.h"

namespace shoal {
namespace {

TEST(HeadsRuntime, SmallVitOnWorkersEqualsOneDevice) {
  const Model m = testing::SmallVit();
  const Tensor x =
      RandomInput(m.graph.tensors.at(m.graph.inputs[0]).shape, 7);
  const Tensor want = testing::RunWholeOrFail(m, x);
  for (int n : {2, 4}) {
    testing::LocalWorkers lc(n);
    PlanOptions po;
    po.strategy = "heads";
    po.devices = testing::EqualDevices(n);
    auto p = MakePlan(m.graph, po);
    ASSERT_TRUE(p.ok()) << p.status().message();
    auto c = Coordinator::Create(p.value(), lc.cluster, {});
    ASSERT_TRUE(c.ok()) << c.status().message();
    const Status d = c.value()->Deploy(m.weights, nullptr);
    ASSERT_TRUE(d.ok()) << d.message();
    Tensor got;
    const Status r = c.value()->Run(x, &got, nullptr, 0);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_LE(MaxRelDiff(got, want), 1e-4) << n << " devices";
  }
}

}  // namespace
}  // namespace shoal
