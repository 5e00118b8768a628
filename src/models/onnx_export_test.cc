// Export: every registered op goes out as valid ONNX (the onnx checker,
// with its own shape inference, accepts the files) and comes back the same.
#include "onnx/onnx_export.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "graph/matmul_to_gemm.h"
#include "graph/op_registry.h"
#include "graph/shape_inference.h"
#include "models/zoo.h"
#include "onnx/drop_identity.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::TempDir;

// One graph using every op shoal registers, with the attributes export
// turns into inputs.
Model AllOpsModel() {
  Model m;
  Graph& g = m.graph;
  g.name = "all_ops";
  EXPECT_TRUE(g.AddInput("x", {1, 4, 8, 8}).ok());
  auto w = [&g](const std::string& name, const Shape& s) {
    EXPECT_TRUE(g.AddWeight(name, s).ok());
    return name;
  };
  auto op = [&g](const std::string& name, const std::string& type,
                 std::vector<std::string> in, Attrs a = {}, int outputs = 1) {
    Node n{name, type, std::move(in), {}, std::move(a)};
    for (int i = 0; i < outputs; ++i)
      n.outputs.push_back(outputs == 1 ? name : name + ":" + std::to_string(i));
    EXPECT_TRUE(g.AddNode(n).ok()) << name;
    return n.outputs[0];
  };
  auto attrs = [](std::initializer_list<std::pair<const char*, AttrValue>> kv) {
    Attrs a;
    for (const auto& [k, v] : kv) a.Set(k, v);
    return a;
  };
  using I = std::vector<int64_t>;
  std::string c = op("conv", "Conv",
                     {"x", w("conv.weight", {8, 4, 3, 3}), w("conv.bias", {8})},
                     attrs({{"kernel_shape", I{3, 3}},
                            {"pads", I{1, 1, 1, 1}},
                            {"strides", I{1, 1}}}));
  std::string b = op("bn", "BatchNormalization",
                     {c, w("bn.weight", {8}), w("bn.bias", {8}),
                      w("bn.mean", {8}), w("bn.var", {8})},
                     attrs({{"epsilon", 1e-3f}}));
  std::string x = op("relu", "Relu", {b});
  const Attrs relu_q =
      attrs({{"scale", std::vector<float>{0.05f}}, {"zero_point", I{-128}}});
  x = op("quant", "QuantizeLinear", {x}, relu_q);
  x = op("dequant", "DequantizeLinear", {x}, relu_q);
  x = op("leaky", "LeakyRelu", {x}, attrs({{"alpha", 0.1f}}));
  x = op("clip", "Clip", {x}, attrs({{"min", 0.f}, {"max", 6.f}}));
  x = op("sigmoid", "Sigmoid", {x});
  x = op("hswish", "HardSwish", {x});
  x = op("identity", "Identity", {x});
  x = op("lrn", "LRN", {x},
         attrs({{"size", int64_t{3}},
                {"alpha", 1e-4f},
                {"beta", 0.75f},
                {"bias", 1.f}}));
  std::string mp = op("maxpool", "MaxPool", {x},
                      attrs({{"kernel_shape", I{2, 2}}, {"strides", I{2, 2}}}));
  std::string ap = op("avgpool", "AveragePool", {x},
                      attrs({{"kernel_shape", I{2, 2}},
                             {"strides", I{2, 2}},
                             {"count_include_pad", int64_t{0}}}));
  std::string s = op("add", "Add", {mp, ap});
  s = op("sub", "Sub", {s, mp});
  s = op("mul", "Mul", {s, w("scale", {1, 8, 1, 1})});
  s = op("div", "Div", {s, ap});
  x = op("concat", "Concat", {s, mp}, attrs({{"axis", int64_t{1}}}));
  x = op("s2d", "SpaceToDepth", {x}, attrs({{"blocksize", int64_t{2}}}));
  x = op("pad", "Pad", {x},
         attrs({{"pads", I{0, 0, 1, 1, 0, 0, 1, 1}},
                {"mode", std::string("reflect")}}));
  x = op("slice", "Slice", {x},
         attrs({{"starts", I{0}}, {"ends", I{32}}, {"axes", I{1}}}));
  op("split", "Split", {x}, attrs({{"axis", int64_t{1}}, {"split", I{16, 16}}}),
     2);
  x = op("transpose", "Transpose", {"split:0"},
         attrs({{"perm", I{0, 2, 3, 1}}}));
  x = op("reshape", "Reshape", {x}, attrs({{"shape", I{1, 4, -1}}}));
  x = op("matmul", "MatMul", {x, w("mm.weight", {64, 10})});
  x = op("mean", "ReduceMean", {x},
         attrs({{"axes", I{1}}, {"keepdims", int64_t{1}}}));
  std::string rm = op("norm", "ReduceL2", {x},
                      attrs({{"axes", I{1}}, {"keepdims", int64_t{0}}}));
  std::string gap = op("gap", "GlobalAveragePool", {"split:1"});
  std::string gmp = op("gmp", "GlobalMaxPool", {"split:1"});
  x = op("pooled", "Add", {gap, gmp});
  x = op("flatten", "Flatten", {x}, attrs({{"axis", int64_t{1}}}));
  // An int8 weight, one scale per output channel.
  std::string fc_w =
      op("fc.dequant", "DequantizeLinear", {w("fc.weight", {10, 16})},
         attrs({{"scale", std::vector<float>(10, 0.01f)},
                {"zero_point", I(10, 0)},
                {"axis", int64_t{0}}}));
  x = op("fc", "Gemm", {x, fc_w, w("fc.bias", {10})},
         attrs({{"transB", int64_t{1}}}));
  x = op("dropout", "Dropout", {x}, attrs({{"ratio", 0.3f}}));
  x = op("sum", "Add", {rm, x});
  x = op("softmax", "Softmax", {x}, attrs({{"axis", int64_t{-1}}}));
  // The ops of the torchvision models: x is [1, 10] here.
  x = op("hsig", "HardSigmoid", {x}, attrs({{"alpha", 0.3f}}));
  x = op("abs", "Abs", {x});
  x = op("sqrt", "Sqrt", {x});
  x = op("neg", "Neg", {x});
  x = op("exp", "Exp", {x});
  x = op("tanh", "Tanh", {x});
  x = op("erf", "Erf", {x});
  x = op("pow", "Pow", {x, w("pow.exponent", {})});
  x = op("where", "Where",
         {w("where.cond", {1, 10}), x, w("where.else", {10})});
  x = op("expand", "Expand", {x}, attrs({{"shape", I{3, 1, 10}}}));
  x = op("ln", "LayerNormalization",
         {x, w("ln.scale", {10}), w("ln.bias", {10})},
         attrs({{"axis", int64_t{-1}}, {"epsilon", 1e-3f}}));
  x = op("gather", "Gather", {x},
         attrs({{"axis", int64_t{0}},
                {"indices", I{2, 0}},
                {"indices_shape", I{2}}}));
  x = op("resize", "Resize", {x},
         attrs({{"mode", std::string("linear")},
                {"coordinate_transformation_mode",
                 std::string("pytorch_half_pixel")},
                {"sizes", I{2, 3, 20}}}));
  g.outputs = {x};
  Status st = InferShapes(&g);
  EXPECT_TRUE(st.ok()) << st.ToString();
  m.weights = RandomWeights(g, 3);
  for (float& v : m.weights.at("fc.weight").data)
    v = std::clamp(std::round(v * 100), -128.f, 127.f);
  // A condition is 0 or 1 (ONNX writes it as BOOL).
  auto& cond = m.weights.at("where.cond").data;
  for (size_t i = 0; i < cond.size(); ++i)
    cond[i] = static_cast<float>(i % 3 == 0);
  return m;
}

TEST(OnnxExport, AllOpsModelUsesEveryRegisteredOp) {
  Model m = AllOpsModel();
  std::set<std::string> used;
  for (const auto& n : m.graph.nodes) used.insert(n.op);
  for (const auto& name : OpRegistry::Global().Names()) {
    EXPECT_TRUE(used.count(name))
        << "op " << name << " is registered but not in the export test";
  }
}

TEST(OnnxExport, AllOpsRoundTripWithWeights) {
  Model m = AllOpsModel();
  TempDir dir;
  ASSERT_TRUE(ExportOnnx(m, dir.File("all.onnx")).ok());
  auto back = ImportOnnx(dir.File("all.onnx"), OnnxImportOptions{});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  Graph want = m.graph;
  EXPECT_EQ(DropIdentityOps(&want), 2);  // Identity and Dropout
  EXPECT_EQ(MatMulToGemm(&want), 1);     // import reads it as a dense layer
  onnx_test::ExpectSameGraph(back->graph, want);
  for (const auto& [name, t] : m.weights)
    EXPECT_EQ(back->weights.at(name).data, t.data) << name;
}

// The onnx checker with full_check runs ONNX's shape inference against the
// value_info we write, so this also checks shoal's shapes against ONNX's.
TEST(OnnxExport, PassesOnnxChecker) {
  TempDir dir;
  std::vector<std::string> files;
  Model all = AllOpsModel();
  files.push_back(dir.File("all_ops.onnx"));
  ASSERT_TRUE(ExportOnnx(all, files.back()).ok());
  for (const char* name : {"lenet5", "cifarnet", "mobilenet-v2"}) {
    const ZooEntry* e = Zoo::Global().Find(name);
    ASSERT_NE(e, nullptr) << name;
    Model m;
    auto g = e->build(e->input_shape);
    ASSERT_TRUE(g.ok()) << name;
    m.graph = *g;
    if (std::string(name) == "lenet5") m.weights = RandomWeights(m.graph, 1);
    files.push_back(dir.File(std::string(name) + ".onnx"));
    ASSERT_TRUE(ExportOnnx(m, files.back()).ok()) << name;
  }
  std::string cmd = onnx_test::PyScript("check_onnx.py");
  for (const auto& f : files) cmd += " " + f;
  std::string out;
  int rc = onnx_test::RunCommand(cmd, &out);
  if (rc == onnx_test::kPythonSkip)
    GTEST_SKIP() << "python onnx missing: " << out;
  EXPECT_EQ(rc, 0) << out;
  for (const auto& f : files)
    EXPECT_NE(out.find("ok " + f), std::string::npos) << out;
}

TEST(OnnxExport, RefusesWeightsOfTheWrongShape) {
  Model m = AllOpsModel();
  m.weights.at("fc.bias") = Tensor(Shape{9});
  onnx::ModelProto proto;
  Status s = ModelToOnnx(m, &proto);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("fc.bias"), std::string::npos) << s.message();
}

TEST(OnnxExport, UnwritablePathIsAnError) {
  Model m = AllOpsModel();
  Status s = ExportOnnx(m, "/nonexistent-dir/x.onnx");
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("/nonexistent-dir/x.onnx"), std::string::npos);
}

}  // namespace
}  // namespace shoal
