#include "runtime/deployment_slots.h"

#include <gtest/gtest.h>

namespace shoal {
namespace {

std::shared_ptr<Deployment> Dep(const std::string& plan_id) {
  auto d = std::make_shared<Deployment>();
  d->id = plan_id + "-deployment";
  d->plan_id = plan_id;
  d->weight_bytes = 100;
  d->activation_bytes = 10;
  return d;
}

TEST(DeploymentSlots, MessagesFindTheCurrentOrTheDrainingPlan) {
  DeploymentSlots slots;
  auto none = slots.ForPlan("p1", "worker w");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "worker w has no deployment");
  slots.Install(Dep("p1"), /*keep_previous=*/false);
  slots.Install(Dep("p2"), /*keep_previous=*/true);
  ASSERT_TRUE(slots.ForPlan("p1", "worker w").ok());  // draining
  ASSERT_TRUE(slots.ForPlan("p2", "worker w").ok());
  EXPECT_EQ(slots.current()->plan_id, "p2");
  auto other = slots.ForPlan("p3", "worker w");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(other.status().message(),
            "worker w holds another plan (p2); deploy the plan again");
  WorkerGauges g;
  slots.AddBytes(&g);
  EXPECT_EQ(g.weight_bytes, 200);
  EXPECT_EQ(g.activation_bytes, 20);
  // Without keep_previous the draining plan goes.
  slots.Install(Dep("p3"), /*keep_previous=*/false);
  EXPECT_FALSE(slots.ForPlan("p2", "worker w").ok());
}

TEST(DeploymentSlots, ReleasingTheCurrentPlanRestoresThePrevious) {
  DeploymentSlots slots;
  EXPECT_EQ(slots.Bytes(), 0);
  slots.Install(Dep("p1"), false);
  EXPECT_EQ(slots.Bytes(), 110);
  slots.Install(Dep("p2"), true);
  EXPECT_EQ(slots.Bytes(), 220);  // both stay until the draining one goes
  bool changed = false;
  EXPECT_FALSE(slots.Release("nope", &changed));
  EXPECT_FALSE(changed);
  EXPECT_TRUE(slots.Release("p2", &changed));
  EXPECT_TRUE(changed);
  EXPECT_EQ(slots.current()->plan_id, "p1");
  EXPECT_TRUE(slots.IsCurrent(slots.current().get()));
  EXPECT_TRUE(slots.Release("p1", &changed));
  EXPECT_EQ(slots.current(), nullptr);
  EXPECT_EQ(slots.Bytes(), 0);
}

TEST(DeploymentSlots, ClearDropsEveryPlan) {
  DeploymentSlots slots;
  slots.Install(Dep("p1"), false);
  slots.Install(Dep("p2"), true);
  slots.Clear();
  EXPECT_EQ(slots.current(), nullptr);
  EXPECT_FALSE(slots.ForPlan("p1", "worker w").ok());
  EXPECT_EQ(slots.Bytes(), 0);
}

TEST(DeploymentSlots, ARedeployOfTheSamePlanIsReused) {
  DeploymentSlots slots;
  slots.Install(Dep("p1"), false);
  slots.Install(Dep("p2"), true);
  EXPECT_EQ(slots.Reuse("p1-deployment", false), nullptr);  // not current
  auto same = slots.Reuse("p2-deployment", /*keep_previous=*/false);
  ASSERT_NE(same, nullptr);
  EXPECT_EQ(same->plan_id, "p2");
  EXPECT_FALSE(slots.ForPlan("p1", "w").ok());  // the draining one went
}

}  // namespace
}  // namespace shoal
