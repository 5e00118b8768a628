// Plans of int8 (QDQ) models: every strategy splits them as it splits the
// float model, each task reads its slice of the int8 weights with that
// slice's scales, the quantized activations travel as int8, and the result
// is the one-device run of the int8 model.
#include <gtest/gtest.h>

#include <random>

#include "engine/calibrate.h"
#include "graph/quantization.h"
#include "models/load_model.h"
#include "partition/plan_test_util.h"
#include "partition/weight_dequantize.h"
#include "plan/int8_transfers.h"
#include "plan/plan_cost.h"

namespace shoal {
namespace {

using testing::Devices;
using testing::RunPlanExact;

// `name` quantized on a few random images in [0, 1].
Model Quantized(const std::string& name) {
  LoadOptions lo;
  lo.with_weights = true;
  lo.fuse_batchnorm = true;
  lo.seed = 5;
  Model m = LoadModel(name, lo).value();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<Tensor> samples;
  const Shape in = m.graph.FindTensor(m.graph.inputs[0])->shape;
  for (int i = 0; i < 8; ++i) {
    Tensor t(in);
    for (float& v : t.data) v = u(rng);
    samples.push_back(std::move(t));
  }
  auto s = QuantizeStatic(samples, &m);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return m;
}

int CountOp(const Graph& g, const std::string& op) {
  int n = 0;
  for (const auto& node : g.nodes) n += node.op == op;
  return n;
}

TEST(WeightDequantize, FoldsEachWeightsDequantize) {
  const Model m = Quantized("lenet5");
  const WeightDequantizeFold f = FoldWeightDequantize(m.graph);
  EXPECT_EQ(f.folded.size(), 5u);  // 2 conv and 3 fc weights
  EXPECT_EQ(CountOp(f.graph, "DequantizeLinear"),
            CountOp(m.graph, "DequantizeLinear") - 5);
  for (const auto& [name, dq] : f.folded) {
    const TensorInfo* t = f.graph.FindTensor(name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_TRUE(t->is_weight()) << name;
    EXPECT_EQ(f.graph.FindTensor(dq.inputs[0]), nullptr)
        << dq.inputs[0] << " is read by nothing once folded";
  }
  // A float model folds nothing.
  LoadOptions lo;
  EXPECT_TRUE(FoldWeightDequantize(LoadModel("lenet5", lo)->graph).empty());
}

TEST(WeightDequantize, OutputSlicesCarryTheirChannelsScales) {
  const Model m = Quantized("lenet5");
  PlanOptions po;
  po.strategy = "lop";
  po.devices = Devices({1, 1, 1});
  po.model.spec = m.graph.name;
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  int slices = 0;
  for (const Task& t : p->tasks) {
    for (const WeightSlice& w : t.weights) {
      const auto readers = t.fragment.ConsumerIndices(w.name);
      ASSERT_FALSE(readers.empty()) << t.name << " " << w.name;
      const Node& reader = t.fragment.nodes[readers[0]];
      if (reader.op != "DequantizeLinear") continue;  // a float bias
      ++slices;
      // The slice of the int8 tensor, and one scale per channel it holds.
      EXPECT_TRUE(m.graph.FindTensor(w.source)->is_weight());
      EXPECT_EQ(m.graph.nodes[m.graph.ConsumerIndices(w.source)[0]].op,
                "DequantizeLinear");
      const auto scales = reader.attrs.GetFloats("scale");
      if (reader.attrs.Has("axis")) {
        EXPECT_EQ(static_cast<int64_t>(scales.size()),
                  w.region.end[reader.attrs.GetInt("axis", 0)] -
                      w.region.begin[reader.attrs.GetInt("axis", 0)])
            << t.name;
      } else {
        EXPECT_EQ(scales.size(), 1u) << t.name;
      }
    }
  }
  EXPECT_GE(slices, 3 * 5);  // every layer split over 3 devices
}

TEST(Int8Transfers, QuantizedActivationsTravelAsInt8) {
  const Model m = Quantized("lenet5");
  for (const std::string s : {"pipeline", "lop", "spatial"}) {
    testing::PlanRunResult r;
    ASSERT_TRUE(RunPlanExact(m, s, Devices({1, 1, 1}), &r)) << s;
    int int8 = 0, remote = 0;
    for (const Transfer& x : r.plan.transfers) {
      int8 += x.int8;
      remote += x.int8 && x.src.task >= 0 && x.dst.task >= 0 &&
                r.plan.DeviceOf(x.src.task) != r.plan.DeviceOf(x.dst.task);
      if (x.int8) {
        EXPECT_EQ(r.plan.WireBytes(x), x.src.region.elements()) << s;
      }
    }
    EXPECT_GT(remote, 0) << s << ": no int8 transfer between devices";
    // The plan file says so, and loads back the same.
    auto back = PlanFromJson(PlanToJson(r.plan));
    ASSERT_TRUE(back.ok());
    int again = 0;
    for (const Transfer& x : back->transfers) again += x.int8;
    EXPECT_EQ(again, int8) << s;
  }
}

TEST(Int8Transfers, TheVerifierRefusesAFloatTransferMarkedInt8) {
  const Model m = Quantized("lenet5");
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "lip", Devices({1, 1}), &r));
  Plan p = r.plan;
  bool marked = false;
  for (Transfer& x : p.transfers) {
    if (!x.int8 && x.src.task >= 0) {
      x.int8 = true;
      marked = true;
      break;
    }
  }
  ASSERT_TRUE(marked);
  Status s = VerifyPlan(p);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("is marked int8"), std::string::npos)
      << s.message();
}

TEST(Int8Transfers, SendInt8TwiceChangesNothing) {
  const Model m = Quantized("lenet5");
  testing::PlanRunResult r;
  ASSERT_TRUE(RunPlanExact(m, "lop", Devices({1, 2}), &r));
  Plan p = r.plan;
  ASSERT_TRUE(SendInt8(&p).ok());
  EXPECT_EQ(PlanToJson(p).dump(), PlanToJson(r.plan).dump());
}

// Every strategy, equal and unequal devices: the int8 model's one-device
// output, or an error that says why the strategy does not apply.
TEST(Int8Plans, EveryStrategyOnLeNet5) {
  testing::ExpectEveryStrategyExact(Quantized("lenet5"),
                                    {{1, 1}, {1, 2, 1}, {1, 1, 1, 1}});
}

TEST(Int8Plans, EveryStrategyOnLeNetFc) {
  testing::ExpectEveryStrategyExact(Quantized("lenet-fc"), {{1, 1}, {2, 1, 1}});
}

// An fc layer split on the 2-D tiles where its inputs lie reads its int8
// columns through a view of the weight, each with the scales of its
// output channels (partition/plan_builder_boxes.cc).
TEST(Int8Plans, FcOnTilesReadsItsInt8ColumnsThroughAView) {
  const Model m = Quantized("cifarnet");
  PlanOptions po;
  po.strategy = "spatial";
  po.devices = Devices({1, 1, 1});
  po.tiles = TileShape::k2D;
  po.spatial_fc = SpatialFc::kLip;
  po.max_read_factor = 6;
  auto p = MakePlan(m.graph, po);
  ASSERT_TRUE(p.ok()) << p.status().message();
  int viewed = 0;
  for (const Task& t : p->tasks) {
    for (const WeightSlice& w : t.weights) {
      viewed += !w.view.empty() && IsInt8Weight(t.fragment, w.name);
    }
  }
  EXPECT_EQ(viewed, 3);
  EXPECT_TRUE(testing::CheckPlanExact(m, std::move(p).value(), nullptr));
}

// The memory a device needs counts a byte for each int8 weight value.
TEST(Int8Plans, WeightsPerDeviceAreInt8Bytes) {
  const Model m = Quantized("lenet-fc");
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  const Model f = LoadModel("lenet-fc", lo).value();
  PlanOptions po;
  po.strategy = "lop";
  po.devices = Devices({1, 1});
  po.model.spec = "lenet-fc";
  auto pq = MakePlan(m.graph, po);
  auto pf = MakePlan(f.graph, po);
  ASSERT_TRUE(pq.ok() && pf.ok());
  auto cq = ComputePlanCost(*pq, m.graph);
  auto cf = ComputePlanCost(*pf, f.graph);
  ASSERT_TRUE(cq.ok() && cf.ok());
  // Weights are int8, biases f32: between a quarter and a third.
  const double ratio = static_cast<double>(cq->max_weight_bytes_per_device()) /
                       static_cast<double>(cf->max_weight_bytes_per_device());
  EXPECT_GT(ratio, 0.25);
  EXPECT_LT(ratio, 0.30);
}

}  // namespace
}  // namespace shoal
