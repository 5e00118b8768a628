// import(export(g)) == g for every zoo model: structure for all of them,
// weights too for lenet5 and resnet18. Dropout is the identity at inference
// and the importer drops it, so the expected graph is g without Dropout.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "graph/shape_inference.h"
#include "models/zoo.h"
#include "onnx/drop_identity.h"
#include "onnx/onnx_export.h"
#include "onnx/onnx_import.h"
#include "onnx/onnx_test_util.h"

namespace shoal {
namespace {

using onnx_test::ExpectSameGraph;
using onnx_test::TempDir;

Graph WithoutDropout(Graph g) {
  DropIdentityOps(&g);
  return g;
}

TEST(OnnxRoundTrip, EveryZooModelStructure) {
  ASSERT_FALSE(Zoo::Global().entries().empty());
  for (const auto& e : Zoo::Global().entries()) {
    SCOPED_TRACE(e.name);
    auto g = e.build(e.input_shape);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    Model m;
    m.graph = *g;
    // In memory: the large models (vgg16: 0.5 GB of zeros) skip the disk.
    onnx::ModelProto proto;
    ASSERT_TRUE(ModelToOnnx(m, &proto).ok());
    EXPECT_EQ(proto.ir_version(), 7);
    OnnxImportOptions o;
    o.load_weights = false;
    auto back = ImportOnnxModel(proto, e.name, ".", o);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_FALSE(back->has_weights());
    ExpectSameGraph(back->graph, WithoutDropout(*g));
  }
}

class OnnxRoundTripWeights : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxRoundTripWeights, ThroughAFile) {
  const ZooEntry* e = Zoo::Global().Find(GetParam());
  ASSERT_NE(e, nullptr);
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  Model m;
  m.graph = *g;
  m.weights = RandomWeights(m.graph, 42);
  TempDir dir;
  const std::string path = dir.File("model.onnx");
  ASSERT_TRUE(ExportOnnx(m, path).ok());
  auto back = ImportOnnx(path, OnnxImportOptions{});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameGraph(back->graph, WithoutDropout(m.graph));
  ASSERT_EQ(back->weights.size(), m.weights.size());
  for (const auto& [name, t] : m.weights) {
    ASSERT_TRUE(back->weights.count(name)) << name;
    EXPECT_EQ(back->weights.at(name).shape, t.shape) << name;
    EXPECT_EQ(back->weights.at(name).data, t.data) << name;  // bit-exact
  }
}

INSTANTIATE_TEST_SUITE_P(OnnxZoo, OnnxRoundTripWeights,
                         ::testing::Values("lenet5", "resnet18"));

TEST(OnnxRoundTrip, NoWeightsWritesZeroInitializers) {
  const ZooEntry* e = Zoo::Global().Find("lenet5");
  auto g = e->build(e->input_shape);
  ASSERT_TRUE(g.ok());
  Model m;
  m.graph = *g;
  onnx::ModelProto proto;
  ASSERT_TRUE(ModelToOnnx(m, &proto).ok());
  int weights = 0;
  for (const auto& [name, t] : g->tensors) weights += t.is_weight();
  ASSERT_EQ(proto.graph().initializer_size(), weights);
  for (const auto& init : proto.graph().initializer()) {
    const TensorInfo* t = g->FindTensor(init.name());
    ASSERT_NE(t, nullptr) << init.name();
    EXPECT_EQ(Shape(init.dims().begin(), init.dims().end()), t->shape);
    EXPECT_EQ(init.raw_data(), std::string(NumElements(t->shape) * 4, '\0'));
  }
  // Graph inputs and outputs carry full shapes; intermediates have
  // value_info.
  ASSERT_EQ(proto.graph().input_size(), 1);
  EXPECT_EQ(proto.graph().input(0).type().tensor_type().shape().dim_size(), 4);
  EXPECT_EQ(proto.graph().value_info_size(),
            static_cast<int>(g->nodes.size()) - 1);
}

// Every op that turns attributes into opset-13 inputs, in one graph.
TEST(OnnxRoundTrip, ControlAttributesBecomeInputsAndBack) {
  Graph g;
  g.name = "control";
  ASSERT_TRUE(g.AddInput("x", {1, 4, 6, 6}).ok());
  auto add = [&g](const std::string& name, const std::string& op,
                  std::vector<std::string> in, Attrs a, int outputs = 1) {
    Node n{name, op, std::move(in), {}, std::move(a)};
    for (int i = 0; i < outputs; ++i)
      n.outputs.push_back(outputs == 1 ? name : name + "." + std::to_string(i));
    ASSERT_TRUE(g.AddNode(n).ok());
  };
  Attrs pad, slice, clip, split, reshape, mean, soft;
  pad.Set("pads", std::vector<int64_t>{0, 0, 1, 2, 0, 0, 3, 0});
  pad.Set("value", 0.5f);
  pad.Set("mode", std::string("constant"));
  // Axes absent (all, in order): the exported Slice has "" for them.
  slice.Set("starts", std::vector<int64_t>{0, 0, 1, -1});
  slice.Set("ends", std::vector<int64_t>{1, 4, 100, 0});
  slice.Set("steps", std::vector<int64_t>{1, 1, 2, -1});
  clip.Set("min", -1.5f);
  clip.Set("max", 2.25f);
  split.Set("axis", int64_t{1});
  split.Set("split", std::vector<int64_t>{1, 3});
  reshape.Set("shape", std::vector<int64_t>{1, -1});
  mean.Set("axes", std::vector<int64_t>{2, 3});
  mean.Set("keepdims", int64_t{0});
  soft.Set("axis", int64_t{-1});
  add("pad", "Pad", {"x"}, pad);
  add("slice", "Slice", {"pad"}, slice);
  add("clip", "Clip", {"slice"}, clip);
  add("split", "Split", {"clip"}, split, 2);
  add("mean", "ReduceMean", {"split.1"}, mean);
  add("hs", "HardSwish", {"mean"}, {});
  add("reshape", "Reshape", {"split.0"}, reshape);
  add("soft", "Softmax", {"reshape"}, soft);
  g.outputs = {"soft", "hs"};
  Status st = InferShapes(&g);
  ASSERT_TRUE(st.ok()) << st.ToString();
  Model m;
  m.graph = g;
  onnx::ModelProto proto;
  ASSERT_TRUE(ModelToOnnx(m, &proto).ok());
  EXPECT_EQ(proto.opset_import(0).version(), 14);  // for HardSwish
  for (const auto& n : proto.graph().node()) {
    if (n.op_type() == "Slice") {
      // data, starts, ends, "" (axes absent), steps
      ASSERT_EQ(n.input_size(), 5);
      EXPECT_EQ(n.input(3), "");
      EXPECT_EQ(n.attribute_size(), 0);
    }
    if (n.op_type() == "Clip") {
      EXPECT_EQ(n.input_size(), 3);
    }
  }
  auto back = ImportOnnxModel(proto, "control", ".", OnnxImportOptions{});
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ExpectSameGraph(back->graph, g);
}

}  // namespace
}  // namespace shoal
