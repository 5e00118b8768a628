// Test helper: makes a Plan by a strategy, checks it survives JSON, runs it
// in-process and compares with the model run whole on one device (the
// runners of plan/in_process_run_test_util.h), and
// compares its counted communication with the paper's formula where one
// applies. Shared by the fast and slow strategy tests.
#ifndef SHOAL_PARTITION_PLAN_TEST_UTIL_H_
#define SHOAL_PARTITION_PLAN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "graph/op_registry.h"
#include "graph/random_input.h"
#include "graph/tensor_diff.h"
#include "partition/plan_formula.h"
#include "partition/strategy.h"
#include "plan/in_process_run_test_util.h"
#include "plan/plan_json.h"
#include "plan/plan_verify.h"

namespace shoal::testing {

inline std::vector<PlanDevice> Devices(const std::vector<double>& shares) {
  std::vector<PlanDevice> d;
  for (size_t i = 0; i < shares.size(); ++i) {
    d.push_back(PlanDevice{"dev" + std::to_string(i), shares[i], 0});
  }
  return d;
}

inline std::vector<PlanDevice> EqualDevices(int n) {
  return Devices(std::vector<double>(n, 1.0));
}

struct PlanRunResult {
  Plan plan;
  RunStats stats;
  double rel_diff = 0;
};

// `m`: BN-folded model with weights. Fails the test on any mismatch.
inline ::testing::AssertionResult CheckPlanExact(const Model& m, Plan p,
                                                 PlanRunResult* result);

// `po`: the whole request (auto with a latency model, say).
inline ::testing::AssertionResult RunPlanExact(
    const Model& m, const PlanOptions& po, PlanRunResult* result = nullptr) {
  auto plan = MakePlan(m.graph, po);
  if (!plan.ok()) {
    return ::testing::AssertionFailure() << "plan: " << plan.status().message();
  }
  return CheckPlanExact(m, std::move(plan).value(), result);
}

// A plan made any way (a builder request, say): verified, JSON round trip,
// run in-process and compared with the one-device run.
inline ::testing::AssertionResult CheckPlanExact(const Model& m, Plan p,
                                                 PlanRunResult* result) {
  const std::string& strategy = p.strategy;
  const std::vector<PlanDevice>& devs = p.devices;
  Status v = VerifyPlan(p);
  if (!v.ok())
    return ::testing::AssertionFailure() << "verify: " << v.message();
  // The JSON form is the plan: round trip it and run what comes back.
  auto back = PlanFromJson(PlanToJson(p));
  if (!back.ok()) {
    return ::testing::AssertionFailure() << "json: " << back.status().message();
  }
  if (PlanToJson(back.value()) != PlanToJson(p)) {
    return ::testing::AssertionFailure() << "JSON round trip changed the plan";
  }
  // runtime's LocalRunner and engine's RunWhole, through the hook the test
  // binary fills: partition builds on neither.
  const InProcessRunners& runners = TheInProcessRunners();
  if (!runners.run_plan || !runners.run_whole) {
    return ::testing::AssertionFailure()
           << "no in-process runners: link runtime/in_process_run_test.cc";
  }
  const Tensor in = RandomInput(p.input_shape, 7);
  Tensor out;
  RunStats stats;
  Status r = runners.run_plan(back.value(), m.weights, in, &out, &stats);
  if (!r.ok()) return ::testing::AssertionFailure() << r.message();
  auto ref = runners.run_whole(m, in);
  if (!ref.ok()) return ::testing::AssertionFailure() << ref.status().message();
  if (ref->shape != out.shape) {
    return ::testing::AssertionFailure() << "output shape differs";
  }
  const double rel = MaxRelDiff(out, *ref);
  if (!(rel <= 1e-4)) {
    return ::testing::AssertionFailure()
           << strategy << " on " << devs.size() << " devices: relative "
           << "difference " << rel << " above 1e-4";
  }
  const RunStats counted = CountCommunication(p);
  if (counted.elements_total != stats.elements_total) {
    return ::testing::AssertionFailure()
           << "run moved " << stats.elements_total << " elements, plan counts "
           << counted.elements_total;
  }
  // The paper's formula is for a chain of layers: there it must equal the
  // count. Where a tensor has several readers, a device that received it
  // once reuses it for all of them, so the plan may move less, never more.
  bool chain = true;
  for (const auto& [name, t] : m.graph.tensors) {
    if (!t.is_weight() && m.graph.ConsumerIndices(name).size() > 1)
      chain = false;
  }
  auto formula = FormulaCommunication(p, m.graph);
  if (formula.ok() && (chain ? formula.value() != stats.elements_total
                             : formula.value() < stats.elements_total)) {
    return ::testing::AssertionFailure()
           << strategy << " on " << devs.size() << " devices: counted "
           << stats.elements_total << " elements, the paper's formula gives "
           << formula.value();
  }
  if (result != nullptr) {
    result->plan = std::move(p);
    result->stats = std::move(stats);
    result->rel_diff = rel;
  }
  return ::testing::AssertionSuccess();
}

inline ::testing::AssertionResult RunPlanExact(
    const Model& m, const std::string& strategy,
    const std::vector<PlanDevice>& devs, PlanRunResult* result = nullptr) {
  PlanOptions po;
  po.strategy = strategy;
  po.devices = devs;
  po.model.spec = m.graph.name;
  return RunPlanExact(m, po, result);
}

// Every strategy on every cluster (shares per device): exact where it
// applies; where it does not, the error must say why.
inline void ExpectEveryStrategyExact(
    const Model& m, const std::vector<std::vector<double>>& clusters) {
  for (const auto& strategy : StrategyNames()) {
    for (const auto& shares : clusters) {
      PlanOptions po;
      po.strategy = strategy;
      po.devices = Devices(shares);
      auto p = MakePlan(m.graph, po);
      if (!p.ok()) {
        const std::string& msg = p.status().message();
        EXPECT_TRUE(msg.find("cannot") != std::string::npos ||
                    msg.find("does not apply") != std::string::npos ||
                    msg.find("fewer than") != std::string::npos)
            << strategy << " x" << shares.size() << ": " << msg;
        continue;
      }
      EXPECT_TRUE(RunPlanExact(m, strategy, Devices(shares)))
          << m.graph.name << " " << strategy << " x" << shares.size();
      if (strategy != "spatial") continue;
      // And on 2-D tiles.
      for (TileShape t : {TileShape::k2D}) {
        po.tiles = t;
        auto pt = MakePlan(m.graph, po);
        if (!pt.ok()) {
          EXPECT_NE(pt.status().message().find("cannot"), std::string::npos)
              << strategy << " x" << shares.size() << ": "
              << pt.status().message();
          continue;
        }
        EXPECT_TRUE(CheckPlanExact(m, std::move(pt).value(), nullptr))
            << m.graph.name << " spatial (tiles "
            << "2d) x" << shares.size();
      }
    }
  }
}

// Per product of two activations in `g` (attention's MatMuls), per device
// of `p`, the extent of its output's first axis the device computes: its
// heads, or its windows (times heads) where the heads are the second axis.
inline std::map<std::string, std::map<int, int64_t>> ProductRowsByDevice(
    const Graph& g, const Plan& p) {
  std::set<std::string> products;
  for (const auto& n : g.nodes) {
    if (SplitFactsOf(n.op).batch_product && n.inputs.size() == 2 &&
        !g.tensors.at(n.inputs[1]).is_weight()) {
      products.insert(n.name);
    }
  }
  std::map<std::string, std::map<int, int64_t>> out;
  for (const auto& t : p.tasks) {
    for (const auto& n : t.fragment.nodes) {
      if (!products.count(n.name)) continue;
      out[n.name][t.devices[0]] +=
          t.fragment.FindTensor(n.outputs[0])->shape[0];
    }
  }
  return out;
}

}  // namespace shoal::testing

#endif  // SHOAL_PARTITION_PLAN_TEST_UTIL_H_
