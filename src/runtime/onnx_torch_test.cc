// Models exported by PyTorch (torch.onnx.export, opsets 11-17) import with
// the shapes, MACs and weights PyTorch has, and compute what PyTorch
// computes. test/py/export_torchvision.py exports them once for the suite.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "engine/executor.h"
#include "graph/cost.h"
#include "io/npy.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"
#include "runtime/backend_compare_test_util.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

// SPEC as export_torchvision.py takes it; the tag names its files.
const char* const kSpecs[] = {
    "resnet18:11",        "resnet18:13:dyn",   "resnet18:17",
    "resnet18:13:bn:run", "mobilenet_v2:13",   "alexnet:13",
    "vgg16:13",           "googlenet:13",      "squeezenet1_1:11:run",
    "squeezenet1_1:17",   "shapes:11:dyn:run", "shapes:13:run",
    "shapes:17:run",      "ops:11:run",        "ops:13:bn:run",
    "ops:17:run",
};

std::string Tag(std::string spec) {
  for (auto& c : spec)
    if (c == ':') c = '_';
  return spec;
}

bool IsTorchvision(const std::string& spec) {
  return spec.rfind("shapes", 0) != 0 && spec.rfind("ops", 0) != 0;
}

class OnnxTorch : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::string cmd =
        onnx_test::PyScript("export_torchvision.py") + " " + dir_->path();
    for (const char* s : kSpecs) cmd += std::string(" ") + s;
    output_ = new std::string();
    rc_ = onnx_test::RunCommand(cmd, output_);
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

  static std::string Path(const std::string& spec, const std::string& ext) {
    return dir_->File(Tag(spec) + ext);
  }
  static nlohmann::json Facts(const std::string& spec) {
    std::ifstream f(Path(spec, ".json"));
    return nlohmann::json::parse(f);
  }
  static StatusOr<Model> Load(const std::string& spec, bool weights,
                              bool fuse_bn = false) {
    OnnxImportOptions o;
    o.load_weights = weights;
    o.fuse_batchnorm = fuse_bn;
    return ImportOnnx(Path(spec, ".onnx"), o);
  }
  // Runs `m` on the input PyTorch ran and compares with PyTorch's output.
  static void ExpectTorchOutput(const std::string& spec, const Model& m,
                                Backend backend) {
    auto x = ReadNpy(Path(spec, ".input.npy"));
    auto want = ReadNpy(Path(spec, ".output.npy"));
    ASSERT_TRUE(x.ok() && want.ok());
    auto got = RunWith(m.graph, m.weights, backend, {*x});
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].shape, want->shape);
    EXPECT_LE(MaxRelDiff(got[0], *want), 1e-4) << spec;
  }

  static TempDir* dir_;
  static std::string* output_;
  static int rc_;
};

TempDir* OnnxTorch::dir_ = nullptr;
std::string* OnnxTorch::output_ = nullptr;
int OnnxTorch::rc_ = -1;

// Output shape and conv + linear MACs equal PyTorch's (forward hooks);
// for torchvision models the weight elements equal the initializers'.
TEST_F(OnnxTorch, ShapesMacsAndWeightsMatchPyTorch) {
  for (const char* spec : kSpecs) {
    SCOPED_TRACE(spec);
    const nlohmann::json facts = Facts(spec);
    auto m = Load(spec, false);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    const Graph& g = m->graph;
    ASSERT_EQ(g.outputs.size(), 1u);
    EXPECT_EQ(g.FindTensor(g.outputs[0])->shape,
              facts["output_shape"].get<Shape>());
    auto cost = ComputeGraphCost(g);
    ASSERT_TRUE(cost.ok());
    EXPECT_EQ(cost->macs, facts["macs"].get<int64_t>());
    if (IsTorchvision(spec)) {
      ASSERT_EQ(facts["initializer_elements"],
                facts["float_initializer_elements"]);
      EXPECT_EQ(cost->weight_elements,
                facts["initializer_elements"].get<int64_t>());
    }
    // Identity, Dropout, Constant and the int64 shape ops leave no trace.
    for (const auto& n : g.nodes) {
      EXPECT_NE(n.op, "Identity") << n.name;
      EXPECT_NE(n.op, "Dropout") << n.name;
    }
  }
}

TEST_F(OnnxTorch, ComputesWhatPyTorchComputes) {
  for (const char* spec : kSpecs) {
    if (std::string(spec).find(":run") == std::string::npos) continue;
    SCOPED_TRACE(spec);
    auto m = Load(spec, true);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    // The naive reference kernels are the oracle; resnet18 is big for them.
    const bool big = std::string(spec).rfind("resnet18", 0) == 0;
    ExpectTorchOutput(spec, *m, big ? Backend::kOneDnn : Backend::kReference);
  }
}

// resnet18:13:bn keeps BN (no constant folding); resnet18:13 is the same
// model (same seeds) with BN fused by PyTorch. shoal's fusion must give
// PyTorch's fused weights, costs and outputs.
TEST_F(OnnxTorch, FusedBatchNormMatchesPyTorchsFusion) {
  const std::string bn_spec = "resnet18:13:bn:run",
                    fused_spec = "resnet18:13:dyn";
  auto ours = Load(bn_spec, true, true);
  ASSERT_TRUE(ours.ok()) << ours.status().ToString();
  auto theirs = Load(fused_spec, true);
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();
  std::vector<const Node*> a, b;
  for (const auto& n : ours->graph.nodes) {
    EXPECT_NE(n.op, "BatchNormalization");
    if (n.op == "Conv") a.push_back(&n);
  }
  for (const auto& n : theirs->graph.nodes)
    if (n.op == "Conv") b.push_back(&n);
  ASSERT_EQ(a.size(), 20u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    for (int k : {1, 2}) {
      const Tensor& x = ours->weights.at(a[i]->inputs[k]);
      const Tensor& y = theirs->weights.at(b[i]->inputs[k]);
      ASSERT_EQ(x.shape, y.shape) << a[i]->name;
      EXPECT_LE(MaxRelDiff(x, y), 1e-5) << a[i]->name << " input " << k;
    }
  }
  auto ca = ComputeGraphCost(ours->graph), cb = ComputeGraphCost(theirs->graph);
  ASSERT_TRUE(ca.ok() && cb.ok());
  EXPECT_EQ(ca->macs, cb->macs);
  EXPECT_EQ(ca->weight_elements, cb->weight_elements);
  ExpectTorchOutput(bn_spec, *ours, Backend::kOneDnn);
}

TEST_F(OnnxTorch, DynamicBatchTakesTheInputShape) {
  OnnxImportOptions o;
  o.load_weights = false;
  auto one = ImportOnnx(Path("resnet18:13:dyn", ".onnx"), o);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->graph.FindTensor(one->graph.inputs[0])->shape,
            (Shape{1, 3, 224, 224}));
  o.input_shape = Shape{2, 3, 160, 160};
  auto two = ImportOnnx(Path("resnet18:13:dyn", ".onnx"), o);
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_EQ(two->graph.FindTensor(two->graph.outputs[0])->shape,
            (Shape{2, 1000}));
}

}  // namespace
}  // namespace shoal
