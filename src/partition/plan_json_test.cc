#include "plan/plan_json.h"

#include <gtest/gtest.h>

#include <fstream>

#include "graph/sparsity.h"
#include "models/load_model.h"
#include "partition/strategy.h"
#include "partition/vit_test_model.h"
#include "plan/json_parse.h"
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

// A transformer's plan by heads: lenet5 has no attention to split.
Plan MakeSmallVitPlan(const std::string& strategy) {
  PlanOptions po;
  po.strategy = strategy;
  po.model.spec = "vit-small";
  for (int i = 0; i < 3; ++i)
    po.devices.push_back(PlanDevice{"d" + std::to_string(i), 1.0, 0});
  auto p = MakePlan(testing::SmallVit().graph, po);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.value();
}

TEST(PlanJson, RoundTripsEveryStrategy) {
  for (const auto& s : StrategyNames()) {
    // windows plans a Swin, which only PyTorch's export gives here: its
    // plans round-trip in WindowsTorchvision (testing::RunPlanExact).
    if (s == "windows") continue;
    Plan p = s == "heads" ? MakeSmallVitPlan(s) : MakeLenetPlan(s);
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

// A plan's wire settings survive JSON; absent, activations are exact
// float32. Prices: half the bytes for f16/bf16; with lz4, a ReLU's output
// at kSparseWireFraction (kPooledWireFraction through the pools after it),
// anything else raw.
TEST(PlanJson, WireSettingsRoundTripAndPriceTheBytes) {
  Plan p = MakeLenetPlan("lop");
  EXPECT_FALSE(PlanToJson(p).contains("wire"));
  std::vector<int64_t> raw;
  for (const auto& x : p.transfers) raw.push_back(p.WireBytes(x));
  p.wire = WireSettings{WireDtype::kBF16, true};
  auto back = PlanFromJson(PlanToJson(p));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->wire.dtype, WireDtype::kBF16);
  EXPECT_TRUE(back->wire.lz4);
  int sparse = 0, dense = 0;
  for (size_t i = 0; i < p.transfers.size(); ++i) {
    const Transfer& x = p.transfers[i];
    const int64_t half = raw[i] / 2;
    if (x.src.task == kModelInput) {
      EXPECT_FALSE(back->SparseSource(x));
    }
    if (back->SparseSource(x)) {
      sparse++;
      const Task& t = back->tasks[x.src.task];
      const double f = IsPooledSparseTensor(t.fragment, x.src.tensor)
                           ? kPooledWireFraction
                           : kSparseWireFraction;
      EXPECT_EQ(back->WireBytes(x), static_cast<int64_t>(half * f));
    } else {
      dense++;
      EXPECT_EQ(back->WireBytes(x), half);
    }
  }
  // lenet's lop: the conv parts end in their ReLU (and pool); the input
  // and the last fc's parts (no ReLU) are dense.
  EXPECT_GT(sparse, 0);
  EXPECT_GT(dense, 0);
  auto j = PlanToJson(p);
  j["wire"]["dtype"] = "f8";
  auto bad = PlanFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'f8'"), std::string::npos);
  j["wire"]["dtype"] = "f16";
  j["wire"]["compression"] = "gzip";
  bad = PlanFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'gzip'"), std::string::npos);
}

// A scattered broadcast survives JSON; plans without the key (trees, and
// those made before it) load as trees.
TEST(PlanJson, BroadcastScatterRoundTrips) {
  Plan p = MakeLenetPlan("lop");
  EXPECT_TRUE(p.broadcast.scatter);  // the planner's default
  p.broadcast.fanout = 16;
  p.broadcast.scatter = false;
  auto j = PlanToJson(p);
  EXPECT_FALSE(j["broadcast"].contains("scatter"));
  p.broadcast.scatter = true;
  j = PlanToJson(p);
  EXPECT_EQ(j["broadcast"]["scatter"], true);
  auto back = PlanFromJson(j);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->broadcast.scatter);
  EXPECT_EQ(back->broadcast.fanout, 16);
  j["broadcast"]["scatter"] = "yes";
  auto bad = PlanFromJson(j);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("scatter"), std::string::npos);
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

// fuzz_plan found a region end of 1777...74 (91 digits): JSON parses it as
// a float, and converting that to an integer is undefined. Integers are
// read as integers, within their type's range, or refused.
TEST(PlanJson, NumbersThatAreNotIntegersOfTheirTypeAreRefused) {
  const std::string good = PlanToJson(MakeLenetPlan("lop")).dump();
  const std::string end = "\"end\":[1,1,28,28]";
  ASSERT_NE(good.find(end), std::string::npos);
  for (const char* v :
       {"1777777777777777777777777777777777777777777777777777777777777777777"
        "777777777777777777777774",
        "1e90", "2.5", "-1e30", "18446744073709551615"}) {
    std::string text = good;
    text.replace(text.find(end), end.size(),
                 "\"end\":[1,1," + std::string(v) + ",28]");
    auto p = PlanFromJson(nlohmann::json::parse(text));
    ASSERT_FALSE(p.ok()) << v;
    EXPECT_NE(p.status().message().find("integer"), std::string::npos)
        << p.status().message();
  }
  auto j = PlanToJson(MakeLenetPlan("lop"));
  j["tasks"][0]["id"] = int64_t{1} << 40;  // beyond int
  EXPECT_FALSE(PlanFromJson(j).ok());
  j = PlanToJson(MakeLenetPlan("lop"));
  j["model"]["weights_seed"] = -1;
  EXPECT_FALSE(PlanFromJson(j).ok());
}

// A plan nested 100 000 deep where an integer belongs (200 KB): refused by
// depth when parsed, and an error message never dumps the structure (which
// recursed once per level and overflowed the stack, `run --local` and a
// worker sent it both).
TEST(PlanJson, DeeplyNestedValuesAreRefusedWithoutRecursion) {
  const std::string good = PlanToJson(MakeLenetPlan("lop")).dump();
  const std::string end = "\"end\":[1,1,28,28]";
  std::string text = good;
  text.replace(text.find(end), end.size(),
               "\"end\":[1,1," + std::string(100000, '[') +
                   std::string(100000, ']') + ",28]");
  const std::string path = ::testing::TempDir() + "/deep_plan.json";
  std::ofstream(path) << text;
  auto p = LoadPlan(path);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("deeper than 64"), std::string::npos)
      << p.status().message();
  // Just within the bound, where PlanFromJson reads it: its message names
  // the value by kind, not by dumping it.
  text = good;
  text.replace(
      text.find(end), end.size(),
      "\"end\":[1,1," + std::string(50, '[') + std::string(50, ']') + ",28]");
  auto j = ParseJson(text, "plan");
  ASSERT_TRUE(j.ok()) << j.status().message();
  auto q = PlanFromJson(*j);
  ASSERT_FALSE(q.ok());
  EXPECT_NE(q.status().message().find("an array of 1"), std::string::npos)
      << q.status().message();
  EXPECT_EQ(JsonBrief(std::string(100, 'x')),
            "\"" + std::string(40, 'x') + "\"...");
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
