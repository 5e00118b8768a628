// LayerNorm written as its arithmetic (torch.onnx below opset 17) imports
// as one LayerNormalization node; chains that are not a LayerNorm import
// as they are. PyTorch's own exports are checked against PyTorch's output
// in runtime/ops_torch_test.cc (layernorm at opset 13).
#include "onnx/fuse_layer_norm.h"

#include <gtest/gtest.h>

#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::AddFloatInit;
using onnx_test::AddIntsAttr;
using onnx_test::AddNode;
using onnx_test::AddOutput;

struct ChainOptions {
  float exponent = 2.f;
  std::vector<int64_t> axes = {-1};
  bool shift = true;
  bool shift_constant = true;
};

// x [1, 5, 16] -> LayerNorm over the last axis, as torch writes it.
onnx::ModelProto Chain(const ChainOptions& o) {
  onnx::ModelProto m = onnx_test::NewModel({"1", "5", "16"});
  AddFloatInit(&m, "two", {}, {o.exponent});
  AddFloatInit(&m, "eps", {}, {1e-6f});
  AddFloatInit(&m, "scale", {16}, std::vector<float>(16, 1.5f));
  AddFloatInit(&m, "shift", {16}, std::vector<float>(16, 0.25f));
  AddIntsAttr(AddNode(&m, "ReduceMean", {"x"}, {"mean"}), "axes", o.axes);
  AddNode(&m, "Sub", {"x", "mean"}, {"d"});
  AddNode(&m, "Pow", {"d", "two"}, {"sq"});
  AddIntsAttr(AddNode(&m, "ReduceMean", {"sq"}, {"var"}), "axes", o.axes);
  AddNode(&m, "Add", {"var", "eps"}, {"var_eps"});
  AddNode(&m, "Sqrt", {"var_eps"}, {"std"});
  AddNode(&m, "Div", {"d", "std"}, {"norm"});
  AddNode(&m, "Mul", {"norm", "scale"}, {"scaled"});
  std::string y = "scaled";
  if (o.shift) {
    AddNode(&m, "Add", {"scaled", o.shift_constant ? "shift" : "x"}, {"y"});
    y = "y";
  }
  AddOutput(&m, y);
  return m;
}

StatusOr<Model> Import(const onnx::ModelProto& m) {
  return ImportOnnxModel(m, "ln.onnx", "", OnnxImportOptions{});
}

TEST(FuseLayerNorm, ChainImportsAsOneNode) {
  auto m = Import(Chain({}));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Graph& g = m->graph;
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& n = g.nodes[0];
  EXPECT_EQ(n.op, "LayerNormalization");
  EXPECT_EQ(n.inputs, (std::vector<std::string>{"x", "scale", "shift"}));
  EXPECT_EQ(n.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(n.attrs.GetInt("axis", 0), -1);
  EXPECT_FLOAT_EQ(n.attrs.GetFloat("epsilon", 0.f), 1e-6f);
}

TEST(FuseLayerNorm, OverTheLastTwoAxes) {
  ChainOptions o;
  o.axes = {1, 2};
  auto m = Import(Chain(o));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  ASSERT_EQ(m->graph.nodes.size(), 1u);
  EXPECT_EQ(m->graph.nodes[0].attrs.GetInt("axis", 0), -2);
}

// A residual's sum after the scale is not a shift: the node ends at Mul.
TEST(FuseLayerNorm, AnAddOfAnActivationStaysAnAdd) {
  ChainOptions o;
  o.shift_constant = false;
  auto m = Import(Chain(o));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const Graph& g = m->graph;
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, "LayerNormalization");
  EXPECT_EQ(g.nodes[0].inputs.size(), 2u);
  EXPECT_EQ(g.nodes[1].op, "Add");
}

TEST(FuseLayerNorm, OtherChainsImportAsTheyAre) {
  ChainOptions cube;
  cube.exponent = 3.f;
  ChainOptions middle;
  middle.axes = {1};
  for (const ChainOptions& o : {cube, middle}) {
    auto m = Import(Chain(o));
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    EXPECT_EQ(m->graph.nodes.size(), 9u);
    for (const auto& n : m->graph.nodes) EXPECT_NE(n.op, "LayerNormalization");
  }
}

}  // namespace
}  // namespace shoal
