// Per-model structure the golden counts cannot see: reference weight names,
// the shapes at the readings docs/models.md explains, and padding choices.
#include <gtest/gtest.h>

#include "models/zoo.h"

namespace shoal {
namespace {

Graph Build(const std::string& name) {
  const ZooEntry* e = Zoo::Global().Find(name);
  EXPECT_NE(e, nullptr) << name;
  auto g = e->build(e->input_shape);
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  return *g;
}

Shape ShapeOf(const Graph& g, const std::string& tensor) {
  const TensorInfo* t = g.FindTensor(tensor);
  EXPECT_NE(t, nullptr) << tensor;
  return t ? t->shape : Shape{};
}

const Node* FindNode(const Graph& g, const std::string& name) {
  for (const auto& n : g.nodes)
    if (n.name == name) return &n;
  ADD_FAILURE() << "no node " << name;
  return nullptr;
}

int CountWeights(const Graph& g) {
  int n = 0;
  for (const auto& [name, info] : g.tensors) n += info.is_weight();
  return n;
}

TEST(ZooLayersTest, MobileNetV2UsesTorchvisionStateDictNames) {
  Graph g = Build("mobilenet-v2");
  // torchvision's state_dict has 314 entries, 52 of them num_batches_tracked.
  EXPECT_EQ(CountWeights(g), 262);
  EXPECT_EQ(ShapeOf(g, "features.0.0.weight"), (Shape{32, 3, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "features.1.conv.0.0.weight"), (Shape{32, 1, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "features.1.conv.1.weight"), (Shape{16, 32, 1, 1}));
  EXPECT_EQ(ShapeOf(g, "features.1.conv.2.running_var"), (Shape{16}));
  EXPECT_EQ(ShapeOf(g, "features.2.conv.1.0.weight"), (Shape{96, 1, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "features.17.conv.3.bias"), (Shape{320}));
  EXPECT_EQ(ShapeOf(g, "features.18.0.weight"), (Shape{1280, 320, 1, 1}));
  EXPECT_EQ(ShapeOf(g, "classifier.1.weight"), (Shape{1000, 1280}));
}

TEST(ZooLayersTest, MobileNetV1PadsStrideTwoLikeKeras) {
  Graph g = Build("mobilenet-v1");
  EXPECT_EQ(FindNode(g, "conv1")->attrs.GetInts("pads"),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(FindNode(g, "conv_dw_1")->attrs.GetInts("pads"),
            (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(ShapeOf(g, "conv_dw_2.weight"), (Shape{64, 1, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "conv_pw_13"), (Shape{1, 1024, 7, 7}));
  EXPECT_EQ(ShapeOf(g, "conv_preds.weight"), (Shape{1000, 1024, 1, 1}));
}

TEST(ZooLayersTest, XceptionReproducesKerasShapes) {
  Graph g = Build("xception");
  EXPECT_EQ(ShapeOf(g, "block1_conv1"), (Shape{1, 32, 149, 149}));
  EXPECT_EQ(ShapeOf(g, "block1_conv2"), (Shape{1, 64, 147, 147}));
  EXPECT_EQ(ShapeOf(g, "block2_pool"), (Shape{1, 128, 74, 74}));
  EXPECT_EQ(ShapeOf(g, "block3_pool"), (Shape{1, 256, 37, 37}));
  EXPECT_EQ(ShapeOf(g, "block4_pool"), (Shape{1, 728, 19, 19}));
  EXPECT_EQ(ShapeOf(g, "block13_pool"), (Shape{1, 1024, 10, 10}));
  // TensorFlow's SAME: the odd padding pixel at the end (74 -> 37).
  EXPECT_EQ(FindNode(g, "block2_pool")->attrs.GetInts("pads"),
            (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(FindNode(g, "block3_pool")->attrs.GetInts("pads"),
            (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_EQ(ShapeOf(g, "block7_sepconv2.depthwise.weight"),
            (Shape{728, 1, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "block14_sepconv2.pointwise.weight"),
            (Shape{2048, 1536, 1, 1}));
  EXPECT_EQ(ShapeOf(g, "block13_residual.weight"), (Shape{1024, 728, 1, 1}));
}

TEST(ZooLayersTest, C3dPool5Gives8192Features) {
  Graph g = Build("c3d");
  EXPECT_EQ(ShapeOf(g, "pool1"), (Shape{1, 64, 16, 56, 56}));
  EXPECT_EQ(ShapeOf(g, "conv5b"), (Shape{1, 512, 2, 7, 7}));
  EXPECT_EQ(ShapeOf(g, "pool5"), (Shape{1, 512, 1, 4, 4}));
  EXPECT_EQ(ShapeOf(g, "fc6.weight"), (Shape{4096, 8192}));
}

TEST(ZooLayersTest, YoloV2PassthroughJoinsLayer16) {
  Graph g = Build("yolov2");
  EXPECT_EQ(ShapeOf(g, "module_list.16.conv_16"), (Shape{1, 512, 26, 26}));
  EXPECT_EQ(ShapeOf(g, "module_list.27.reorg_27"), (Shape{1, 256, 13, 13}));
  EXPECT_EQ(ShapeOf(g, "module_list.29.conv_29.weight"),
            (Shape{1024, 1280, 3, 3}));
  EXPECT_EQ(ShapeOf(g, "module_list.30.conv_30.bias"), (Shape{425}));
  // Only the last conv has a bias; the others are followed by BN.
  EXPECT_EQ(g.FindTensor("module_list.29.conv_29.bias"), nullptr);
}

TEST(ZooLayersTest, CifarNetMatchesLcpFcWidth) {
  Graph g = Build("cifarnet");
  EXPECT_EQ(ShapeOf(g, "pool2"), (Shape{1, 64, 5, 5}));
  EXPECT_EQ(ShapeOf(g, "fc3.weight"), (Shape{384, 1600}));
  // tf.nn.lrn(depth_radius=4, alpha=0.001/9) in ONNX terms.
  EXPECT_EQ(FindNode(g, "norm1")->attrs.GetInt("size"), 9);
  EXPECT_FLOAT_EQ(FindNode(g, "norm1")->attrs.GetFloat("alpha"), 0.001f);
}

TEST(ZooLayersTest, VggSRoundsPoolsDown) {
  Graph g = Build("vgg-s");
  EXPECT_EQ(ShapeOf(g, "pool1"), (Shape{1, 96, 36, 36}));
  EXPECT_EQ(ShapeOf(g, "pool2"), (Shape{1, 256, 16, 16}));
  EXPECT_EQ(ShapeOf(g, "pool5"), (Shape{1, 512, 5, 5}));
}

// An input too small for the model fails while building, naming the layer,
// with the same check a plan's fragments get (at 64x64 vgg-s's pool5 would
// turn 2x2 into 0x0).
TEST(ZooLayersTest, InputTooSmallNamesTheLayer) {
  auto g = Zoo::Global().Find("vgg-s")->build({1, 3, 64, 64});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("pool5"), std::string::npos)
      << g.status().ToString();
  EXPECT_NE(g.status().message().find("0x0"), std::string::npos);
}

}  // namespace
}  // namespace shoal
