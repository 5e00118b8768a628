// auto's fused-segment candidates (partition/fused_segments.h): compared
// with the other strips, and chosen where one message per segment of
// residual blocks beats one per block.
#include <gtest/gtest.h>

#include "models/load_model.h"
#include "partition/strategy.h"
#include "planner/pi_threes_test_util.h"

namespace shoal {
namespace {

using testing::PiThrees;

// ResNet-18 on six Pi 3B+: segments of two to three residual blocks, the
// first (which reads the image over one uplink) shallower, are predicted
// faster than strips that exchange halos at every block (195.8 ms against
// 198.1 for the best of those, when written).
TEST(AutoSegments, ChosenForResNet18OnSixPiThrees) {
  LoadOptions lo;
  lo.with_weights = false;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("resnet18", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto p = MakePlan(m->graph, PiThrees(6, "resnet18"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->prediction.has_value());
  EXPECT_EQ(p->prediction->method.rfind("segments-", 0), 0u)
      << p->prediction->method;
  double best_strips = 0;
  for (const auto& a : p->prediction->alternatives) {
    if (a.name.rfind("spatial", 0) != 0 || a.latency_s <= 0) continue;
    if (best_strips == 0 || a.latency_s < best_strips)
      best_strips = a.latency_s;
  }
  EXPECT_LT(p->prediction->latency_s, best_strips);
}

}  // namespace
}  // namespace shoal
