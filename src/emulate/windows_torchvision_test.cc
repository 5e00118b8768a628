// torchvision's own ONNX export of a small SwinTransformer
// (test/py/export_torchvision.py, `swin`) at opsets 13 and 17: its window
// grids are found alike, and `windows` splits it on 2, 3, 4 and 8 devices,
// each device computing its own windows: exactly the one-device output
// (within 1e-4) and PyTorch's, and no device receiving a whole map of a
// stage, only the rows and columns a shift or a patch merging reads.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "graph/op_registry.h"
#include "io/npy.h"
#include "models/load_model.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"
#include "partition/plan_test_util.h"
#include "partition/window_grids.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

class WindowsTorchvision : public ::testing::TestWithParam<int> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    output_ = new std::string();
    rc_ = onnx_test::RunCommand(onnx_test::PyScript("export_torchvision.py") +
                                    " " + dir_->path() +
                                    " swin:13:run swin:17:run",
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
    return dir_->File("swin_" + std::to_string(opset) + "_run" + ext);
  }
  static StatusOr<Model> Load(int opset) {
    return ImportOnnx(File(opset, ".onnx"), OnnxImportOptions{});
  }
  static TempDir* dir_;
  static std::string* output_;
  static int rc_;
};

TempDir* WindowsTorchvision::dir_ = nullptr;
std::string* WindowsTorchvision::output_ = nullptr;
int WindowsTorchvision::rc_ = -1;

TEST_P(WindowsTorchvision, GridsAreFound) {
  auto m = Load(GetParam());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const auto grids = FindWindowGrids(m->graph);
  ASSERT_EQ(grids.size(), 3u);
  const int64_t sides[] = {16, 8, 4};
  for (size_t k = 0; k < grids.size(); ++k) {
    EXPECT_EQ(grids[k].height, sides[k]);
    EXPECT_EQ(grids[k].width, sides[k]);
    EXPECT_EQ(grids[k].window, 4);
  }
}

TEST(WindowsStrategy, RefusesAModelWithoutWindows) {
  LoadOptions lo;
  lo.fuse_batchnorm = true;
  auto m = LoadModel("lenet5", lo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  PlanOptions po;
  po.strategy = "windows";
  po.devices = testing::EqualDevices(2);
  auto p = MakePlan(m->graph, po);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("no window attention"), std::string::npos)
      << p.status().message();
}

TEST_P(WindowsTorchvision, WindowsIsExactAndSplitsTheWindows) {
  const int opset = GetParam();
  auto m = Load(opset);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto x = ReadNpy(File(opset, ".input.npy"));
  auto want = ReadNpy(File(opset, ".output.npy"));
  ASSERT_TRUE(x.ok() && want.ok());
  std::set<Shape> maps;
  for (const auto& grid : FindWindowGrids(m->graph)) {
    maps.insert(Shape{grid.height, grid.width});
  }
  for (int devices : {2, 3, 4, 8}) {
    SCOPED_TRACE(devices);
    testing::PlanRunResult r;
    // Against the one-device run (RunPlanExact: verified, JSON round trip).
    ASSERT_TRUE(testing::RunPlanExact(*m, "windows",
                                      testing::EqualDevices(devices), &r));
    // The products of the first stage (16 windows) run on every device,
    // as many windows on each where they divide evenly; the last stage's
    // one window on one.
    const auto rows = testing::ProductRowsByDevice(m->graph, r.plan);
    ASSERT_EQ(rows.size(), 12u);  // 2 per block, 6 blocks
    int first_stage = 0;
    for (const auto& [node, by_device] : rows) {
      const int64_t windows = by_device.begin()->second;
      int64_t sum = 0;
      for (const auto& [dev, w] : by_device) {
        // As many on each, where the windows divide evenly.
        if (16 % devices == 0) {
          EXPECT_EQ(w, windows) << node << " on device " << dev;
        }
        sum += w;
      }
      if (sum == 16) {  // the first stage's 16 windows
        ++first_stage;
        EXPECT_EQ(static_cast<int>(by_device.size()), devices) << node;
      }
      if (sum == 1) {
        EXPECT_EQ(by_device.size(), 1u) << node;
      }
    }
    EXPECT_EQ(first_stage, 4);
    // No device sends another a whole map of a stage: the bands, shifts
    // and patch mergings move parts of them.
    for (const auto& t : r.plan.transfers) {
      if (t.src.task < 0 || t.dst.task < 0 ||
          r.plan.tasks[t.src.task].devices ==
              r.plan.tasks[t.dst.task].devices) {
        continue;
      }
      const Shape e = t.src.region.extent();
      if (e.size() != 4) continue;
      const Shape& s = m->graph.FindTensor(t.src.tensor) != nullptr
                           ? m->graph.FindTensor(t.src.tensor)->shape
                           : Shape{};
      if (s.size() == 4 && maps.count(Shape{s[1], s[2]})) {
        EXPECT_LT(e[1] * e[2], s[1] * s[2]) << t.src.tensor;
      }
    }
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

// torchvision's swin_t itself (224x224, windows of 7x7), as a user plans
// and runs it on four Pi 4B: every stage's windows spread, the output the
// one-device run's (`run --local --check`).
TEST(WindowsSwinT, OnFourPi4IsExactThroughRunLocal) {
  onnx_test::TempDir dir;
  std::string out;
  const int rc =
      onnx_test::RunCommand(onnx_test::PyScript("export_torchvision.py") + " " +
                                dir.path() + " swin_t:17",
                            &out);
  if (rc == onnx_test::kPythonSkip) GTEST_SKIP() << "torch missing: " << out;
  ASSERT_EQ(rc, 0) << out;
  const std::string shoal = SHOAL_BINARY;
  const std::string plan = dir.File("plan.json");
  out.clear();
  ASSERT_EQ(onnx_test::RunCommand(
                shoal + " plan " + dir.File("swin_t_17.onnx") + " --cluster " +
                    SHOAL_SOURCE_DIR + "/examples/pi4-4.yaml" +
                    " --strategy windows --verbose -o " + plan,
                &out),
            0)
      << out;
  EXPECT_NE(out.find("windows - MatMul runs on each device's box of whole "
                     "windows"),
            std::string::npos)
      << out;
  out.clear();
  ASSERT_EQ(onnx_test::RunCommand(
                shoal + " run --plan " + plan + " --local --check", &out),
            0)
      << out;
  EXPECT_NE(out.find("(ok)"), std::string::npos) << out;
}

INSTANTIATE_TEST_SUITE_P(Opsets, WindowsTorchvision, ::testing::Values(13, 17),
                         [](const auto& info) {
                           return "opset" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace shoal
