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
// faster than strips that exchange halos at every block, as both are cut
// by the devices' shares (195.8 ms against 197.3, when written); balanced
// by finish time, the per-block strips catch up (195.5), and auto keeps
// the faster.
TEST(AutoSegments, BeatPerBlockStripsForResNet18OnSixPiThrees) {
  LoadOptions lo;
  lo.with_weights = false;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("resnet18", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  auto p = MakePlan(m->graph, PiThrees(6, "resnet18"));
  ASSERT_TRUE(p.ok()) << p.status().message();
  ASSERT_TRUE(p->prediction.has_value());
  double best_segments = 0, best_strips = 0, best_any = 0;
  auto lower = [](double* best, double v) {
    if (*best == 0 || v < *best) *best = v;
  };
  for (const auto& a : p->prediction->alternatives) {
    if (a.latency_s <= 0) continue;
    lower(&best_any, a.latency_s);
    if (a.name.rfind("segments-", 0) == 0) lower(&best_segments, a.latency_s);
    const bool balanced =
        a.name.size() > 9 &&
        a.name.compare(a.name.size() - 9, 9, "-balanced") == 0;
    if (a.name.rfind("spatial", 0) == 0 && !balanced)
      lower(&best_strips, a.latency_s);
  }
  ASSERT_GT(best_segments, 0);
  ASSERT_GT(best_strips, 0);
  EXPECT_LT(best_segments, best_strips);
  // auto's choice is the fastest candidate, segments or not.
  EXPECT_LE(p->prediction->latency_s, best_any * (1 + 1e-9));
}

}  // namespace
}  // namespace shoal
