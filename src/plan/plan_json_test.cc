#include "plan/plan_json.h"

#include <gtest/gtest.h>

#include <fstream>

#include "models/load_model.h"
#include "partition/strategy.h"
#include "plan/plan_verify.h"

namespace shoal {
namespace {

Plan MakeLenetPlan(const std::string& strategy, Graph* model = nullptr) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  Model m = LoadModel("lenet5", lo).value();
  PlanOptions po;
  po.strategy = strategy;
  po.model.spec = "lenet5";
  for (int i = 0; i < 3; ++i)
    po.devices.push_back(PlanDevice{"d" + std::to_string(i), 1.0, 0});
  auto p = MakePlan(m.graph, po);
  EXPECT_TRUE(p.ok()) << p.status().message();
  if (model) *model = m.graph;
  return p.value();
}

TEST(PlanJson, RoundTripsEveryStrategy) {
  for (const auto& s : StrategyNames()) {
    Plan p = MakeLenetPlan(s);
    auto back = PlanFromJson(PlanToJson(p));
    ASSERT_TRUE(back.ok()) << s << ": " << back.status().message();
    EXPECT_EQ(PlanToJson(back.value()), PlanToJson(p)) << s;
    EXPECT_TRUE(VerifyPlan(back.value()).ok()) << s;
  }
}

TEST(PlanJson, ImageInputRoundTripsAndPricesAByteAValue) {
  Plan p = MakeLenetPlan("spatial");
  const auto floats = PlanToJson(p);
  EXPECT_FALSE(floats.at("input").contains("pixels")) << "absent: float32";
  int64_t f32 = 0;
  for (const auto& x : p.transfers) f32 += p.WireBytes(x);
  p.input_pixels = true;
  auto back = PlanFromJson(PlanToJson(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->input_pixels);
  int64_t px = 0, input_values = 0;
  for (const auto& x : p.transfers) {
    px += back->WireBytes(x);
    if (x.src.task == kModelInput) input_values += x.src.region.elements();
  }
  EXPECT_EQ(f32 - px, 3 * input_values);
}

TEST(PlanJson, RefusesOtherVersionsAndFormats) {
  auto j = PlanToJson(MakeLenetPlan("lop"));
  j["version"] = 99;
  auto p = PlanFromJson(j);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("version 99"), std::string::npos);
  EXPECT_FALSE(PlanFromJson(nlohmann::json{{"hello", 1}}).ok());
  j = PlanToJson(MakeLenetPlan("lop"));
  j["transfers"][0]["merge"] = "avg";
  p = PlanFromJson(j);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("avg"), std::string::npos);
  j = PlanToJson(MakeLenetPlan("lop"));
  j["tasks"][0].erase("fragment");
  EXPECT_FALSE(PlanFromJson(j).ok());
}

TEST(PlanJson, LoadPlanNamesTheFileAndTheProblem) {
  const std::string path = ::testing::TempDir() + "/bad_plan.json";
  std::ofstream(path) << "{ not json";
  auto p = LoadPlan(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(path), std::string::npos);
  EXPECT_FALSE(LoadPlan(path + ".missing").ok());
}

TEST(PlanVerify, CatchesBrokenPlans) {
  Plan good = MakeLenetPlan("lop");
  ASSERT_TRUE(VerifyPlan(good).ok());
  {
    Plan p = good;  // a transfer dropped: an input is left unfilled
    p.transfers.erase(p.transfers.begin() + 1);
    Status s = VerifyPlan(p);
    EXPECT_FALSE(s.ok());
  }
  {
    Plan p = good;  // a region outside its tensor
    p.transfers[0].src.region.end[1] += 100;
    p.transfers[0].dst.region.end[1] += 100;
    EXPECT_FALSE(VerifyPlan(p).ok());
  }
  {
    Plan p = good;  // a device that does not exist
    p.tasks[0].devices = {7};
    EXPECT_NE(VerifyPlan(p).message().find("device 7"), std::string::npos);
  }
  {
    Plan p = good;  // waiting on a later task would deadlock
    for (auto& x : p.transfers) {
      if (x.src.task >= 0 && x.dst.task >= 0) {
        std::swap(x.src.task, x.dst.task);
        break;
      }
    }
    EXPECT_FALSE(VerifyPlan(p).ok());
  }
}

// Coverage is counted per element of a box, so a box one row short or
// sent twice is caught even when every other box is right.
TEST(PlanVerify, CountsEveryElementOfEachBox) {
  Plan good = MakeLenetPlan("spatial");
  ASSERT_TRUE(VerifyPlan(good).ok());
  int strip = -1;  // a copied box narrower than its destination tensor
  for (size_t i = 0; i < good.transfers.size(); ++i) {
    const Transfer& x = good.transfers[i];
    if (x.merge == Merge::kCopy && x.dst.task >= 0 &&
        x.dst.region.rank() == 4 &&
        x.dst.region.end[2] - x.dst.region.begin[2] > 1) {
      strip = static_cast<int>(i);
      break;
    }
  }
  ASSERT_GE(strip, 0);
  {
    Plan p = good;  // one row short
    --p.transfers[strip].src.region.end[2];
    --p.transfers[strip].dst.region.end[2];
    EXPECT_NE(VerifyPlan(p).message().find("unfilled"), std::string::npos)
        << VerifyPlan(p).message();
  }
  {
    Plan p = good;  // the same box sent twice
    p.transfers.push_back(p.transfers[strip]);
    EXPECT_NE(VerifyPlan(p).message().find("overlap"), std::string::npos)
        << VerifyPlan(p).message();
  }
}

TEST(PlanVerify, RejectsAPlanForAnotherModel) {
  Plan p = MakeLenetPlan("lop");
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  Model other = LoadModel("lenet-fc", lo).value();
  EXPECT_FALSE(VerifyPlanAgainstModel(p, other.graph).ok());
  Graph lenet;
  MakeLenetPlan("lop", &lenet);
  EXPECT_TRUE(VerifyPlanAgainstModel(p, lenet).ok());
}

}  // namespace
}  // namespace shoal
