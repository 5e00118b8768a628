// Mutated plan files, loaded and run in this process the way `shoal run
// --local` does (parse, verify, verify against the model, run): each must
// either run or be refused with a Status, never crash, hang or throw. The
// mutations are seeded, so a failure reproduces; a crash fails the whole
// test binary, which is the point.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>

#include "graph/cost.h"
#include "graph/random_input.h"
#include "models/load_model.h"
#include "partition/strategy.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"
#include "runtime/local_runner.h"

namespace shoal {
namespace {

using nlohmann::json;

// What the worker's memory budget would refuse is not run here: a mutated
// padding can ask for a tensor of gigabytes that is valid but too large to
// allocate in a test (the budget check, not the parser, stops it).
constexpr int64_t kRunBudgetBytes = int64_t{64} << 20;

struct Outcomes {
  int refused = 0, ran = 0, run_error = 0, over_budget = 0;
};

// Loads the plan as `run --local` does and runs it once.
void LoadAndRun(const json& j, const Model& m, Outcomes* o) {
  auto p = PlanFromJson(j);
  Status s = p.ok() ? VerifyPlan(*p) : p.status();
  if (s.ok()) s = VerifyPlanAgainstModel(*p, m.graph);
  if (!s.ok()) {
    EXPECT_FALSE(s.message().empty());
    o->refused++;
    return;
  }
  for (const auto& t : p->tasks) {
    if (PeakActivationBytes(t.fragment) > kRunBudgetBytes) {
      o->over_budget++;
      return;
    }
  }
  auto runner = LocalRunner::Create(*p, m.weights, LocalRunOptions{});
  if (!runner.ok()) {
    o->run_error++;
    return;
  }
  Tensor out;
  s = (*runner)->Run(RandomInput(p->input_shape, 1), &out, nullptr);
  if (s.ok()) {
    EXPECT_EQ(out.shape, p->output_shape);
    o->ran++;
  } else {
    o->run_error++;
  }
}

// Every value in the document, by JSON pointer.
void Collect(const json& j, const json::json_pointer& at,
             std::vector<json::json_pointer>* out) {
  out->push_back(at);
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) Collect(v, at / k, out);
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) Collect(j[i], at / i, out);
  }
}

json Extreme(std::mt19937_64& rng) {
  static const int64_t kInts[] = {0,
                                  -1,
                                  1,
                                  2,
                                  3,
                                  255,
                                  65536,
                                  (int64_t{1} << 31) - 1,
                                  int64_t{1} << 31,
                                  int64_t{1} << 32,
                                  int64_t{1} << 62,
                                  -(int64_t{1} << 62),
                                  std::numeric_limits<int64_t>::max(),
                                  std::numeric_limits<int64_t>::min()};
  static const double kDoubles[] = {std::nan(""), INFINITY, -INFINITY, 1e-300,
                                    -0.5,         1e300,    0.5};
  switch (rng() % 4) {
    case 0:
      return kInts[rng() % std::size(kInts)];
    case 1:
      return kDoubles[rng() % std::size(kDoubles)];
    case 2: {
      static const char* kStrings[] = {"", "x", "../x", "\xff\xfe", "sum"};
      return kStrings[rng() % std::size(kStrings)];
    }
    default: {
      static const json kOthers[] = {json::array(), json::object(), nullptr,
                                     true, json::array({json::array()})};
      return kOthers[rng() % std::size(kOthers)];
    }
  }
}

// One random change: an extreme value, a deletion, a copy of another part
// of the plan (realistic values in the wrong place), or an array grown,
// shrunk or nudged.
void Mutate(json* doc, std::mt19937_64& rng) {
  std::vector<json::json_pointer> at;
  Collect(*doc, json::json_pointer(), &at);
  const json::json_pointer target = at[1 + rng() % (at.size() - 1)];
  json& v = (*doc)[target];
  switch (rng() % 5) {
    case 0:
    case 1:
      v = Extreme(rng);
      break;
    case 2: {
      json& parent = (*doc)[target.parent_pointer()];
      if (parent.is_object()) {
        parent.erase(target.back());
      } else if (parent.is_array()) {
        parent.erase(parent.begin() + std::stoll(target.back()));
      }
      break;
    }
    case 3:
      v = (*doc)[at[rng() % at.size()]];
      break;
    default:
      if (v.is_array() && !v.empty()) {
        if (rng() % 2) {
          v.push_back(v[rng() % v.size()]);
        } else {
          v.erase(v.begin() + rng() % v.size());
        }
      } else if (v.is_number_integer()) {
        v = v.get<int64_t>() + (rng() % 2 ? 1 : -1);
      } else {
        v = Extreme(rng);
      }
  }
}

Model Lenet() {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  lo.with_weights = true;
  return LoadModel("lenet5", lo).value();
}

json PlanFor(const Model& m, const std::string& strategy) {
  PlanOptions po;
  po.strategy = strategy;
  po.model.spec = "lenet5";
  for (int i = 0; i < 3; ++i) {
    po.devices.push_back(PlanDevice{"d" + std::to_string(i), 1.0 + i, 0});
  }
  return PlanToJson(MakePlan(m.graph, po).value());
}

TEST(PlanMutation, EveryMutatedPlanRunsOrIsRefused) {
  const Model m = Lenet();
  Outcomes o;
  std::mt19937_64 rng(26);
  for (const char* strategy : {"lop", "lip", "spatial", "fuse", "pipeline"}) {
    const json base = PlanFor(m, strategy);
    for (int i = 0; i < 120; ++i) {
      json j = base;
      const int n = 1 + static_cast<int>(rng() % 3);
      for (int k = 0; k < n; ++k) Mutate(&j, rng);
      SCOPED_TRACE(std::string(strategy) + " mutation " + std::to_string(i));
      LoadAndRun(j, m, &o);
    }
  }
  // Both outcomes occur, so the mutations reach past the parser and the
  // verifier (most mutations break a plan; about 1 in 60 leaves it valid).
  EXPECT_GT(o.refused, 100);
  EXPECT_GE(o.ran, 5);
  std::cout << "refused " << o.refused << ", ran " << o.ran
            << ", failed while running " << o.run_error << ", over budget "
            << o.over_budget << "\n";
}

TEST(PlanMutation, EveryMutatedPlanTextParsesOrIsRefused) {
  const Model m = Lenet();
  const std::string base = PlanFor(m, "spatial").dump();
  Outcomes o;
  std::mt19937_64 rng(62);
  for (int i = 0; i < 200; ++i) {
    std::string text = base;
    switch (i % 3) {
      case 0:  // flipped bytes
        for (int k = 0; k < 4; ++k) text[rng() % text.size()] ^= 1 << rng() % 8;
        break;
      case 1:  // a digit run made long
        text.insert(text.find_first_of("0123456789", rng() % text.size()),
                    std::string(1 + rng() % 25, '9'));
        break;
      default:  // truncated
        text.resize(rng() % text.size());
    }
    json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
      o.refused++;
      continue;
    }
    LoadAndRun(j, m, &o);
  }
  EXPECT_GT(o.refused, 50);
}

// The cases of issue 26, by hand: each refused with a message naming it.
TEST(PlanMutation, HugeShapesAndRaggedRegionsAreRefusedByName) {
  const Model m = Lenet();
  const json base = PlanFor(m, "lop");
  json j = base;
  j["output"]["shape"] = {int64_t{1} << 62, int64_t{1} << 62};
  auto p = PlanFromJson(j);
  ASSERT_TRUE(p.ok());
  Status s = VerifyPlan(*p);
  EXPECT_NE(s.message().find("more than 2^36 elements"), std::string::npos)
      << s.message();

  j = base;
  j["transfers"][0]["dst"]["region"]["end"] = json::array();
  p = PlanFromJson(j);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("begin and end of one rank"),
            std::string::npos)
      << p.status().message();

  j = base;
  j["devices"][0]["share"] = 1e-30;
  p = PlanFromJson(j);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("share"), std::string::npos);
}

}  // namespace
}  // namespace shoal
