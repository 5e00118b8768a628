// QuantizeLinear / DequantizeLinear through ONNX: a QDQ model written by
// onnx.helper imports (int8 initializers become integer-valued weights) and
// gives the output numpy and PyTorch compute for it; export writes int8
// initializers back, passes onnx.checker and imports to the same model;
// malformed Q/DQ nodes are refused with the node named.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/run_whole.h"
#include "io/npy.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::AddFloatInit;
using onnx_test::AddNode;
using onnx_test::AddOutput;
using onnx_test::NewModel;
using onnx_test::TempDir;

// The model, input and expected output of test/py/qdq_model.py; false when
// Python lacks onnx or torch.
bool WriteQdqModel(const TempDir& dir) {
  std::string out;
  const int rc = onnx_test::RunCommand(
      onnx_test::PyScript("qdq_model.py") + " " + dir.path(), &out);
  if (rc == onnx_test::kPythonSkip) return false;
  EXPECT_EQ(rc, 0) << out;
  return true;
}

TEST(OnnxQuant, ImportsQdqAndMatchesNumpyAndTorch) {
  TempDir dir;
  if (!WriteQdqModel(dir)) GTEST_SKIP() << "python onnx/torch missing";
  auto m = ImportOnnx(dir.File("qdq.onnx"), OnnxImportOptions{});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  // The int8 weights are weights holding integers; scales are attributes.
  const Tensor& w1 = m->weights.at("w1");
  EXPECT_EQ(w1.shape, (Shape{4, 2, 3, 3}));
  for (float v : w1.data) {
    EXPECT_EQ(v, std::nearbyint(v));
    EXPECT_TRUE(v >= -128 && v <= 127) << v;
  }
  EXPECT_EQ(m->weights.count("s1"), 0u);
  const Node* dq = m->graph.FindNode("dq_w1");
  ASSERT_NE(dq, nullptr);
  EXPECT_EQ(dq->inputs, (std::vector<std::string>{"w1"}));
  EXPECT_EQ(dq->attrs.GetFloats("scale").size(), 4u);
  EXPECT_EQ(dq->attrs.GetInt("axis"), 0);
  const Node* q = m->graph.FindNode("q_r");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->attrs.GetInts("zero_point"), (std::vector<int64_t>{-128}));
  EXPECT_FALSE(q->attrs.Has("axis"));

  auto x = ReadNpy(dir.File("x.npy"));
  auto want = ReadNpy(dir.File("y.npy"));
  ASSERT_TRUE(x.ok() && want.ok());
  for (Backend b : {Backend::kReference, Backend::kOneDnn}) {
    ExecutorOptions o;
    o.backend = b;
    auto y = RunWhole(*m, *x, o);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    ASSERT_EQ(y->shape, want->shape);
    // One activation step of the last Q (0.015) may flip where PyTorch's
    // float order of summation lands a value on the other side of a tie;
    // through the gemm's weights that moves an output by at most
    // 0.015 * 128 * 0.01. Otherwise float rounding alone.
    for (int64_t i = 0; i < want->size(); ++i)
      EXPECT_NEAR(y->data[i], want->data[i], 2e-4 + 0.0193) << BackendName(b);
    int exact = 0;
    for (int64_t i = 0; i < want->size(); ++i)
      exact += std::fabs(y->data[i] - want->data[i]) < 1e-4;
    EXPECT_GE(exact, want->size() - 1) << BackendName(b);
  }
}

TEST(OnnxQuant, ExportWritesInt8AndRoundTrips) {
  TempDir dir;
  if (!WriteQdqModel(dir)) GTEST_SKIP() << "python onnx/torch missing";
  auto m = ImportOnnx(dir.File("qdq.onnx"), OnnxImportOptions{});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  onnx::ModelProto proto;
  ASSERT_TRUE(ModelToOnnx(*m, &proto).ok());
  int int8_weights = 0;
  for (const auto& t : proto.graph().initializer()) {
    if (t.name() == "w1" || t.name() == "w2") {
      EXPECT_EQ(t.data_type(), onnx::TensorProto::INT8) << t.name();
      // One byte a value: a quarter of the f32 bytes.
      EXPECT_EQ(static_cast<int64_t>(t.raw_data().size()),
                NumElements(Shape(t.dims().begin(), t.dims().end())));
      ++int8_weights;
    }
  }
  EXPECT_EQ(int8_weights, 2);
  const std::string path = dir.File("back.onnx");
  ASSERT_TRUE(ExportOnnx(*m, path).ok());
  auto back = ImportOnnx(path, OnnxImportOptions{});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  onnx_test::ExpectSameGraph(back->graph, m->graph);
  for (const auto& [name, t] : m->weights)
    EXPECT_EQ(back->weights.at(name).data, t.data) << name;

  std::string out;
  const int rc = onnx_test::RunCommand(
      onnx_test::PyScript("check_onnx.py") + " " + path, &out);
  EXPECT_EQ(rc, 0) << out;
}

TEST(OnnxQuant, RefusesNonInt8WeightsOnExport) {
  TempDir dir;
  if (!WriteQdqModel(dir)) GTEST_SKIP() << "python onnx/torch missing";
  auto m = ImportOnnx(dir.File("qdq.onnx"), OnnxImportOptions{});
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  m->weights.at("w2").data[5] = 0.5f;
  onnx::ModelProto proto;
  Status s = ModelToOnnx(*m, &proto);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("'w2'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("dq_w2"), std::string::npos) << s.message();
}

void AddTypedInit(onnx::ModelProto* m, const std::string& name, int32_t type,
                  const Shape& shape, const std::vector<int32_t>& values) {
  auto* t = m->mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : shape) t->add_dims(d);
  for (int32_t v : values) t->add_int32_data(v);
}

// x -> Q(scale, zero point) -> DQ -> y, with the inputs given by name.
onnx::ModelProto QdqModel(const std::string& q_scale, const std::string& q_zp,
                          const std::string& dq_x = "xq") {
  onnx::ModelProto m = NewModel({"2", "4"});
  AddFloatInit(&m, "s", {}, {0.1f});
  AddFloatInit(&m, "s0", {}, {0.f});
  AddFloatInit(&m, "s4", {4}, {0.1f, 0.1f, 0.2f, 0.2f});
  AddTypedInit(&m, "z", onnx::TensorProto::INT8, {}, {0});
  AddTypedInit(&m, "z4", onnx::TensorProto::INT8, {4}, {0, 0, 0, 0});
  AddTypedInit(&m, "zu", onnx::TensorProto::UINT8, {}, {128});
  AddTypedInit(&m, "w32", onnx::TensorProto::INT32, {2, 4},
               {1, 2, 3, 4, 5, 6, 7, 8});
  std::vector<std::string> q_in = {"x", q_scale};
  if (!q_zp.empty()) q_in.push_back(q_zp);
  AddNode(&m, "QuantizeLinear", q_in, {"xq"}, "the_q");
  AddNode(&m, "DequantizeLinear", {dq_x, "s", "z"}, {"y"}, "the_dq");
  AddOutput(&m, "y");
  return m;
}

StatusOr<Model> Import(const onnx::ModelProto& proto) {
  return ImportOnnxModel(proto, "test.onnx", "", OnnxImportOptions{});
}

TEST(OnnxQuant, MalformedNodesAreRefusedByName) {
  struct Bad {
    onnx::ModelProto model;
    const char* node;
    const char* says;
  };
  std::vector<Bad> cases = {
      {QdqModel("s", "zu"), "the_q", "UINT8"},
      {QdqModel("s", ""), "the_q", "uint8"},
      {QdqModel("s0", "z"), "the_q", "finite positive"},
      {QdqModel("s4", "z4"), "the_q", "per-axis"},
      {QdqModel("s", "z4"), "the_q", "4 values for 1 scales"},
      {QdqModel("x", "z"), "the_q", "computed at run time"},
      {QdqModel("s", "z", "w32"), "the_dq", "INT32"},
  };
  for (const Bad& c : cases) {
    auto m = Import(c.model);
    ASSERT_FALSE(m.ok()) << c.says;
    EXPECT_NE(m.status().message().find(c.node), std::string::npos)
        << m.status().message();
    EXPECT_NE(m.status().message().find(c.says), std::string::npos)
        << m.status().message();
  }
  auto good = Import(QdqModel("s", "z"));
  EXPECT_TRUE(good.ok()) << good.status().ToString();
}

}  // namespace
}  // namespace shoal
