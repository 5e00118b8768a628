// Import of hand-written ONNX models: each test covers one ONNX form that
// exporters emit and shoal must turn into its own IR.
#include "onnx/onnx_import.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "engine/executor.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using namespace onnx_test;  // NOLINT: the model-writing helpers

StatusOr<Model> Import(const onnx::ModelProto& m, OnnxImportOptions o = {},
                       const std::string& dir = ".") {
  return ImportOnnxModel(m, "test.onnx", dir, o);
}

const Node* FindOp(const Graph& g, const std::string& op) {
  for (const auto& n : g.nodes)
    if (n.op == op) return &n;
  return nullptr;
}

onnx::NodeProto* AddConstant(onnx::ModelProto* m, const std::string& name,
                             const std::vector<int64_t>& v) {
  auto* n = AddNode(m, "Constant", {}, {name});
  auto* a = n->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  a->mutable_t()->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) a->mutable_t()->add_int64_data(x);
  return n;
}

// x.view(x.size(0), -1) as PyTorch writes it, on a symbolic batch.
TEST(OnnxImport, FoldsShapeSubgraphIntoReshape) {
  onnx::ModelProto m = NewModel({"batch", "3", "4", "4"});
  AddNode(&m, "Relu", {"x"}, {"r"});
  AddNode(&m, "Shape", {"r"}, {"s"});
  AddConstant(&m, "zero", {0});
  AddNode(&m, "Gather", {"s", "zero"}, {"n"});  // [1]: index is 1-D
  AddConstant(&m, "minus1", {-1});
  auto* cat = AddNode(&m, "Concat", {"n", "minus1"}, {"target"});
  AddIntAttr(cat, "axis", 0);
  AddNode(&m, "Reshape", {"r", "target"}, {"y"});
  AddOutput(&m, "y", {"batch", "48"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.FindTensor("x")->shape, (Shape{1, 3, 4, 4}));
  ASSERT_EQ(g->graph.nodes.size(), 2u);
  const Node* r = FindOp(g->graph, "Reshape");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->inputs, std::vector<std::string>{"r"});
  EXPECT_EQ(r->attrs.GetInts("shape"), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(g->graph.FindTensor("y")->shape, (Shape{1, 48}));
  EXPECT_EQ(g->graph.tensors.size(), 3u);  // x, r, y: no int64 tensor left
}

TEST(OnnxImport, InitializersListedAsInputsAreWeights) {
  onnx::ModelProto m = NewModel({"1", "2", "3", "3"});
  SetTensorType(m.mutable_graph()->add_input(), "w", {"4", "2", "1", "1"});
  std::vector<float> w(8);
  for (int i = 0; i < 8; ++i) w[i] = 0.25f * i;
  AddFloatInit(&m, "w", {4, 2, 1, 1}, w);
  // raw_data, as PyTorch writes it
  auto* b = m.mutable_graph()->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(4);
  std::vector<float> bias = {1, 2, 3, 4};
  b->set_raw_data(std::string(reinterpret_cast<char*>(bias.data()), 16));
  AddNode(&m, "Conv", {"x", "w", "b"}, {"y"});
  AddOutput(&m, "y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.inputs, std::vector<std::string>{"x"});
  EXPECT_TRUE(g->graph.FindTensor("w")->is_weight());
  EXPECT_EQ(g->weights.at("w").data, w);
  EXPECT_EQ(g->weights.at("b").data, bias);
  EXPECT_EQ(g->graph.FindTensor("y")->shape, (Shape{1, 4, 3, 3}));

  OnnxImportOptions structure;
  structure.load_weights = false;
  auto s = Import(m, structure);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->weights.empty());
  EXPECT_EQ(s->graph.FindTensor("w")->shape, (Shape{4, 2, 1, 1}));
}

TEST(OnnxImport, Int64InitializersBecomeAttributes) {
  onnx::ModelProto m = NewModel({"1", "2", "6"});
  AddInt64Init(&m, "shape", {0, 3, -1});
  AddInt64Init(&m, "starts", {1});
  AddInt64Init(&m, "ends", {std::numeric_limits<int64_t>::max()});
  AddInt64Init(&m, "axes", {2});
  AddNode(&m, "Reshape", {"x", "shape"}, {"r"});
  AddNode(&m, "Slice", {"r", "starts", "ends", "axes"}, {"y"});
  AddOutput(&m, "y", {"1", "3", "3"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_FALSE(g->graph.FindTensor("shape"));
  const Node* s = FindOp(g->graph, "Slice");
  EXPECT_EQ(s->attrs.GetInts("ends"),
            std::vector<int64_t>{std::numeric_limits<int64_t>::max()});
  EXPECT_FALSE(s->attrs.Has("steps"));
  EXPECT_TRUE(g->weights.empty());
}

TEST(OnnxImport, ClipBoundsFromInputsAndAttributes) {
  for (int64_t opset : {11, 13, 10}) {
    SCOPED_TRACE(opset);
    onnx::ModelProto m = NewModel({"1", "4"}, opset);
    onnx::NodeProto* clip;
    if (opset >= 11) {
      AddFloatInit(&m, "hi", {}, {6.f});
      clip = AddNode(&m, "Clip", {"x", "", "hi"}, {"y"});
    } else {
      clip = AddNode(&m, "Clip", {"x"}, {"y"});
      auto* a = clip->add_attribute();
      a->set_name("max");
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(6.f);
    }
    AddOutput(&m, "y");
    auto g = Import(m);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const Node& n = g->graph.nodes[0];
    EXPECT_EQ(n.inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(n.attrs.GetFloat("min"), std::numeric_limits<float>::lowest());
    EXPECT_EQ(n.attrs.GetFloat("max"), 6.f);
    EXPECT_FALSE(g->graph.FindTensor("hi"));
  }
}

TEST(OnnxImport, PadSplitReduceMeanAtOpset18) {
  onnx::ModelProto m = NewModel({"1", "5", "4"}, 18);
  AddInt64Init(&m, "pads", {1, 2});
  AddInt64Init(&m, "pad_axes", {-1});
  AddFloatInit(&m, "value", {}, {0.5f});
  AddNode(&m, "Pad", {"x", "pads", "value", "pad_axes"}, {"p"});  // 1x5x7
  auto* split = AddNode(&m, "Split", {"p"}, {"a", "b"});
  AddIntAttr(split, "axis", 1);
  AddIntAttr(split, "num_outputs", 2);  // 5 -> 3 + 2
  AddInt64Init(&m, "mean_axes", {2});
  AddNode(&m, "ReduceMean", {"b", "mean_axes"}, {"y"});
  AddOutput(&m, "a", {"1", "3", "7"});
  AddOutput(&m, "y", {"1", "2", "1"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(FindOp(g->graph, "Pad")->attrs.GetInts("pads"),
            (std::vector<int64_t>{0, 0, 1, 0, 0, 2}));
  EXPECT_EQ(FindOp(g->graph, "Pad")->attrs.GetFloat("value"), 0.5f);
  EXPECT_EQ(FindOp(g->graph, "Split")->attrs.GetInts("split"),
            (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(FindOp(g->graph, "ReduceMean")->attrs.GetInts("axes"),
            std::vector<int64_t>{2});
}

TEST(OnnxImport, ConstantFloatsBecomeWeights) {
  onnx::ModelProto m = NewModel({"1", "2", "2", "2"});
  auto* c = AddNode(&m, "Constant", {}, {"scale"});
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 2, 1, 1}) a->mutable_t()->add_dims(d);
  a->mutable_t()->add_float_data(2.f);
  a->mutable_t()->add_float_data(3.f);
  AddNode(&m, "Identity", {"scale"}, {"scale2"});  // PyTorch's weight sharing
  AddNode(&m, "Mul", {"x", "scale2"}, {"y"});
  AddOutput(&m, "y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->graph.nodes.size(), 1u);
  EXPECT_EQ(g->graph.nodes[0].inputs, (std::vector<std::string>{"x", "scale"}));
  EXPECT_EQ(g->weights.at("scale").data, (std::vector<float>{2.f, 3.f}));
}

TEST(OnnxImport, SoftmaxBeforeOpset13) {
  struct Case {
    std::vector<std::string> dims;
    int64_t axis;
    bool ok;
  };
  for (const Case& c :
       {Case{{"1", "10"}, 1, true}, Case{{"1", "1", "5"}, 1, true},
        Case{{"1", "3", "4"}, 1, false}, Case{{"2", "5"}, 0, false}}) {
    onnx::ModelProto m = NewModel(c.dims, 11);
    AddIntAttr(AddNode(&m, "Softmax", {"x"}, {"y"}, "sm"), "axis", c.axis);
    AddOutput(&m, "y");
    auto g = Import(m);
    EXPECT_EQ(g.ok(), c.ok) << g.status().ToString();
    if (g.ok()) {
      EXPECT_EQ(g->graph.nodes[0].attrs.GetInt("axis"),
                static_cast<int64_t>(c.dims.size()) - 1);
    } else {
      EXPECT_EQ(g.status().code(), Code::kUnsupported);
      EXPECT_NE(g.status().message().find("'sm'"), std::string::npos);
    }
  }
}

TEST(OnnxImport, DynamicDimensions) {
  onnx::ModelProto m = NewModel({"batch", "3", "height", "width"});
  AddNode(&m, "Relu", {"x"}, {"y"});
  AddOutput(&m, "y");
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
  EXPECT_NE(g.status().message().find("'x'"), std::string::npos);
  EXPECT_NE(g.status().message().find("height"), std::string::npos);
  EXPECT_NE(g.status().message().find("--input-shape"), std::string::npos);

  OnnxImportOptions o;
  o.input_shape = Shape{2, 3, 8, 6};
  g = Import(m, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.FindTensor("y")->shape, (Shape{2, 3, 8, 6}));

  o.input_shape = Shape{3, 8, 6};
  g = Import(m, o);
  EXPECT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("rank"), std::string::npos);
}

TEST(OnnxImport, DeclaredShapesAreChecked) {
  onnx::ModelProto m = NewModel({"1", "3", "8", "8"});
  auto* pool = AddNode(&m, "MaxPool", {"x"}, {"p"});
  AddIntsAttr(pool, "kernel_shape", {2, 2});
  AddIntsAttr(pool, "strides", {2, 2});
  AddNode(&m, "Relu", {"p"}, {"y"});
  SetTensorType(m.mutable_graph()->add_value_info(), "p", {"1", "3", "4", "5"});
  AddOutput(&m, "y", {"1", "3", "4", "4"});
  auto g = Import(m);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("tensor 'p'"), std::string::npos);
  EXPECT_NE(g.status().message().find("1x3x4x5"), std::string::npos);
  EXPECT_NE(g.status().message().find("test.onnx"), std::string::npos);

  // --input-shape replacing fixed dims makes the declared shapes moot.
  OnnxImportOptions o;
  o.input_shape = Shape{1, 3, 16, 16};
  auto big = Import(m, o);
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->graph.FindTensor("y")->shape, (Shape{1, 3, 8, 8}));
}

TEST(OnnxImport, IdentityAndDropoutAreDropped) {
  onnx::ModelProto m = NewModel({"1", "8"}, 13);
  AddNode(&m, "Relu", {"x"}, {"r"});
  AddFloatInit(&m, "ratio", {}, {0.5f});
  AddNode(&m, "Dropout", {"r", "ratio"}, {"d", "mask"});  // mask unread
  AddNode(&m, "Identity", {"d"}, {"output"});
  AddOutput(&m, "output", {"1", "8"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->graph.nodes.size(), 1u);
  EXPECT_EQ(g->graph.nodes[0].outputs, std::vector<std::string>{"output"});
  EXPECT_EQ(g->graph.outputs, std::vector<std::string>{"output"});

  AddNode(&m, "Relu", {"mask"}, {"m2"});
  AddOutput(&m, "m2");
  g = Import(m);
  EXPECT_EQ(g.status().code(), Code::kUnsupported);
  EXPECT_NE(g.status().message().find("mask"), std::string::npos);
}

// A Pad by zeros (swin_t's windows at 224x224) and a Dropout of ratio 0
// in training mode (swin_t's attention) are the identity: both go.
TEST(OnnxImport, PadByZerosAndDropoutOfNothingAreDropped) {
  onnx::ModelProto m = NewModel({"1", "2", "4"}, 13);
  AddInt64Init(&m, "pads", {0, 0, 0, 0, 0, 0});
  AddNode(&m, "Pad", {"x", "pads"}, {"p"});
  AddFloatInit(&m, "ratio", {}, {0.f});
  AddInt64Init(&m, "train", {1});
  AddNode(&m, "Dropout", {"p", "ratio", "train"}, {"d"});
  AddNode(&m, "Relu", {"d"}, {"y"});
  AddOutput(&m, "y", {"1", "2", "4"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->graph.nodes.size(), 1u);
  EXPECT_EQ(g->graph.nodes[0].op, "Relu");
  EXPECT_EQ(g->graph.nodes[0].inputs, std::vector<std::string>{"x"});
}

void SetEquation(onnx::NodeProto* n, const std::string& eq) {
  auto* a = n->add_attribute();
  a->set_name("equation");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(eq);
}

// maxvit's attention Einsums are MatMuls (the first with its second operand
// transposed) and compute the same; another equation is refused by name.
TEST(OnnxImport, EinsumAsBatchedMatMul) {
  onnx::ModelProto m = NewModel({"1", "2", "3", "4"}, 13);
  SetEquation(AddNode(&m, "Einsum", {"x", "x"}, {"s"}),
              "B H I D, B H J D -> B H I J");
  SetEquation(AddNode(&m, "Einsum", {"s", "x"}, {"y"}), "bhij,bhjd->bhid");
  AddOutput(&m, "y", {"1", "2", "3", "4"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  std::vector<std::string> ops;
  for (const auto& n : g->graph.nodes) ops.push_back(n.op);
  EXPECT_EQ(ops, (std::vector<std::string>{"Transpose", "MatMul", "MatMul"}));
  EXPECT_EQ(g->graph.FindTensor("s")->shape, (Shape{1, 2, 3, 3}));
  // y[h][i][d] = sum_j (sum_e x[h][i][e] x[h][j][e]) x[h][j][d]
  Tensor x({1, 2, 3, 4});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = 0.1f * (i % 7) - 0.3f;
  ExecutorOptions o;
  o.backend = Backend::kReference;
  auto ex = Executor::Create(g->graph, g->weights, o);
  ASSERT_TRUE(ex.ok()) << ex.status().ToString();
  std::vector<Tensor> out;
  ASSERT_TRUE((*ex)->Run({x}, &out).ok());
  auto at = [&](int h, int i, int d) { return x.data[(h * 3 + i) * 4 + d]; };
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 3; ++i)
      for (int d = 0; d < 4; ++d) {
        double want = 0;
        for (int j = 0; j < 3; ++j) {
          double sij = 0;
          for (int e = 0; e < 4; ++e) sij += at(h, i, e) * at(h, j, e);
          want += sij * at(h, j, d);
        }
        EXPECT_NEAR(out[0].data[(h * 3 + i) * 4 + d], want, 1e-5);
      }

  onnx::ModelProto bad = NewModel({"2", "3"}, 13);
  SetEquation(AddNode(&bad, "Einsum", {"x", "x"}, {"t"}), "ij,ij->i");
  AddOutput(&bad, "t", {"2"});
  auto refused = Import(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("Einsum"), std::string::npos)
      << refused.status().ToString();
}

TEST(OnnxImport, SqueezeAndUnsqueezeOfDataBecomeReshape) {
  onnx::ModelProto m = NewModel({"1", "4", "1", "1"}, 11);
  AddIntsAttr(AddNode(&m, "Squeeze", {"x"}, {"s"}), "axes", {2, 3});
  AddIntsAttr(AddNode(&m, "Unsqueeze", {"s"}, {"y"}), "axes", {0});
  AddOutput(&m, "y", {"1", "1", "4"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->graph.nodes.size(), 2u);
  EXPECT_EQ(g->graph.nodes[0].op, "Reshape");
  EXPECT_EQ(g->graph.nodes[0].attrs.GetInts("shape"),
            (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(g->graph.nodes[1].attrs.GetInts("shape"),
            (std::vector<int64_t>{1, 1, 4}));
}

TEST(OnnxImport, FuseBatchNormOption) {
  onnx::ModelProto m = NewModel({"1", "2", "4", "4"});
  AddFloatInit(&m, "w", {3, 2, 1, 1}, std::vector<float>(6, 1.f));
  for (const char* p : {"g", "b", "mean", "var"})
    AddFloatInit(&m, p, {3}, {1.f, 2.f, 4.f});
  AddNode(&m, "Conv", {"x", "w"}, {"c"});
  AddNode(&m, "BatchNormalization", {"c", "g", "b", "mean", "var"}, {"y"});
  AddOutput(&m, "y", {"1", "3", "4", "4"});
  OnnxImportOptions o;
  o.fuse_batchnorm = true;
  auto g = Import(m, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  ASSERT_EQ(g->graph.nodes.size(), 1u);
  const Node& conv = g->graph.nodes[0];
  ASSERT_EQ(conv.inputs.size(), 3u);
  EXPECT_EQ(conv.outputs, std::vector<std::string>{"y"});
  // s = g / sqrt(var + 1e-5); b' = (0 - mean) * s + b = b - g for g == mean.
  const auto& bias = g->weights.at(conv.inputs[2]).data;
  EXPECT_NEAR(bias[2], 4.f - 4.f * 4.f / std::sqrt(4.f + 1e-5f), 1e-5);
  EXPECT_NEAR(g->weights.at("w").data[0], 1.f / std::sqrt(1.f + 1e-5f), 1e-6);
  EXPECT_EQ(g->weights.size(), 2u);
}

TEST(OnnxImport, ExternalDataNextToTheModel) {
  TempDir dir;
  std::vector<float> w = {1.5f, -2.f, 3.25f, 4.f};
  {
    std::ofstream f(dir.File("weights.bin"), std::ios::binary);
    f.write("PAD!", 4);  // an offset, as exporters align tensors
    f.write(reinterpret_cast<const char*>(w.data()), 16);
  }
  onnx::ModelProto m = NewModel({"1", "4"});
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto kv = [t](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  kv("location", "weights.bin");
  kv("offset", "4");
  kv("length", "16");
  AddNode(&m, "Add", {"x", "w"}, {"y"});
  AddOutput(&m, "y");
  const std::string path = WriteModel(dir, "model.onnx", m);
  auto g = ImportOnnx(path, OnnxImportOptions{});
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->weights.at("w").data, w);

  // Structure only: the data file is never opened.
  std::filesystem::remove(dir.File("weights.bin"));
  OnnxImportOptions o;
  o.load_weights = false;
  EXPECT_TRUE(ImportOnnx(path, o).ok());
  g = ImportOnnx(path, OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kNotFound);
  EXPECT_NE(g.status().message().find("weights.bin"), std::string::npos);

  t->mutable_external_data(0)->set_value("../../etc/passwd");
  g = ImportOnnx(WriteModel(dir, "escape.onnx", m), OnnxImportOptions{});
  EXPECT_EQ(g.status().code(), Code::kInvalidArgument);
}

TEST(OnnxImport, UnnamedNodesGetUniqueNames) {
  onnx::ModelProto m = NewModel({"1", "4"});
  AddNode(&m, "Relu", {"x"}, {"a"}, "same");
  AddNode(&m, "Relu", {"a"}, {"b"}, "same");
  AddNode(&m, "Sigmoid", {"b"}, {"y"})->clear_name();
  AddOutput(&m, "y");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(g->graph.nodes[0].name, "same");
  EXPECT_EQ(g->graph.nodes[1].name, "same_2");
  EXPECT_EQ(g->graph.nodes[2].name, "Sigmoid_2");
}

}  // namespace
}  // namespace shoal
