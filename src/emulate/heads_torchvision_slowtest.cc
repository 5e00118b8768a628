// torchvision's own ONNX export of a small VisionTransformer
// (test/py/export_torchvision.py, `vit`) at opsets 13 and 17: its blocks
// are recognised alike (Q, K and V packed in one projection and cut by
// Slice; LayerNorm decomposed below opset 17), and `heads` splits them on 2
// and 4 devices, each device computing its own heads' attention, exactly:
// the one-device output within 1e-4 and PyTorch's.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "graph/op_registry.h"
#include "io/npy.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"
#include "partition/plan_test_util.h"
#include "partition/transformer_blocks.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

class HeadsTorchvision : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    output_ = new std::string();
    rc_ =
        onnx_test::RunCommand(onnx_test::PyScript("export_torchvision.py") +
                                  " " + dir_->path() + " vit:13:run vit:17:run",
                              output_);
  }
  static void TearDownTestSuite() {
    delete dir_;
    delete output_;
  }
  void SetUp() override {
    if (rc_ == onnx_test::kPythonSkip)
      GTEST_SKIP() << "torch missing: " << *output_;
    ASSERT_EQ(rc_, 0) << *output_;
  }
  static std::string File(int opset, const std::string& ext) {
    return dir_->File("vit_" + std::to_string(opset) + "_run" + ext);
  }
  static StatusOr<Model> Load(int opset) {
    return ImportOnnx(File(opset, ".onnx"), OnnxImportOptions{});
  }
  static TempDir* dir_;
  static std::string* output_;
  static int rc_;
};

TempDir* HeadsTorchvision::dir_ = nullptr;
std::string* HeadsTorchvision::output_ = nullptr;
int HeadsTorchvision::rc_ = -1;

std::map<std::string, int> OpCounts(const Graph& g) {
  std::map<std::string, int> n;
  for (const auto& node : g.nodes) ++n[node.op];
  return n;
}

TEST_P(HeadsTorchvision, BlocksAreRecognised) {
  auto m = Load(GetParam());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto attention = FindAttentionBlocks(m->graph);
  ASSERT_EQ(attention.size(), 2u);
  std::vector<std::string> taken;
  for (const auto& a : attention) {
    // One projection packs Q, K and V, in its columns 0, 64 and 128.
    EXPECT_EQ(a.q, a.k);
    EXPECT_EQ(a.q, a.v);
    EXPECT_EQ(a.SegmentsOf(a.q), 3);
    EXPECT_EQ(a.q_begin, 0);
    EXPECT_EQ(a.k_begin, 64);
    EXPECT_EQ(a.v_begin, 128);
    EXPECT_EQ(a.heads, 4);
    EXPECT_EQ(a.head_width, 16);
    taken.push_back(a.q);
    taken.push_back(a.out);
  }
  EXPECT_EQ(FindMlpBlocks(m->graph, taken).size(), 2u);
}

// Opset 13's decomposed LayerNorms import as the LayerNormalization nodes
// opset 17 exports: the two graphs have the same ops.
TEST_F(HeadsTorchvision, OpsetsImportAlike) {
  auto m13 = Load(13);
  auto m17 = Load(17);
  ASSERT_TRUE(m13.ok()) << m13.status().ToString();
  ASSERT_TRUE(m17.ok()) << m17.status().ToString();
  const auto ops = OpCounts(m13->graph);
  EXPECT_EQ(ops, OpCounts(m17->graph));
  EXPECT_EQ(ops.count("ReduceMean"), 0u);
  EXPECT_EQ(ops.at("LayerNormalization"), 5);
}

TEST_P(HeadsTorchvision, HeadsIsExactAndSplitsAttention) {
  const int opset = GetParam();
  auto m = Load(opset);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto x = ReadNpy(File(opset, ".input.npy"));
  auto want = ReadNpy(File(opset, ".output.npy"));
  ASSERT_TRUE(x.ok() && want.ok());
  for (int devices : {2, 4}) {
    SCOPED_TRACE(devices);
    testing::PlanRunResult r;
    // Against the one-device run (RunPlanExact: verified, JSON round trip).
    ASSERT_TRUE(
        testing::RunPlanExact(*m, "heads", testing::EqualDevices(devices), &r));
    // Each of the 4 products per block (scores and context of 2 blocks)
    // runs on every device, on its own heads: 4 heads on 2 or 4 devices.
    const auto heads = testing::ProductRowsByDevice(m->graph, r.plan);
    ASSERT_EQ(heads.size(), 4u);
    for (const auto& [node, by_device] : heads) {
      EXPECT_EQ(static_cast<int>(by_device.size()), devices) << node;
      int64_t sum = 0;
      for (const auto& [dev, h] : by_device) sum += h;
      EXPECT_EQ(sum, 4) << node;
    }
    // The packed projection: on each device, one part per segment.
    const auto attention = FindAttentionBlocks(m->graph);
    ASSERT_FALSE(attention.empty());
    std::map<int, int> parts;
    for (const auto& t : r.plan.tasks) {
      for (const auto& n : t.fragment.nodes) {
        if (n.name == attention[0].q) ++parts[t.devices[0]];
      }
    }
    EXPECT_EQ(static_cast<int>(parts.size()), devices);
    for (const auto& [dev, k] : parts) EXPECT_EQ(k, 3) << dev;
    // And PyTorch's output, from PyTorch's input.
    Tensor got;
    RunStats stats;
    Status s = testing::TheInProcessRunners().run_plan(r.plan, m->weights, *x,
                                                       &got, &stats);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(got.shape, want->shape);
    EXPECT_LE(MaxRelDiff(got, *want), 1e-4);
  }
}

INSTANTIATE_TEST_SUITE_P(Opsets, HeadsTorchvision, ::testing::Values(13, 17),
                         [](const auto& info) {
                           return "opset" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace shoal
