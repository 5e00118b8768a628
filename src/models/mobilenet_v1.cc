// MobileNet v1 (Howard et al. 2017), width 1.0, as Keras defines it
// (keras.applications.MobileNet): conv + BN + ReLU6, depthwise convs as
// group = channels, a 1x1 conv classifier. 4,231,976 params (torch-style:
// BN scale and shift counted, running statistics not); 568.7M MACs, the
// paper's "569M mult-adds".
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// Keras pads a stride-2 3x3 conv by (0, 1) (TensorFlow's SAME at an even
// extent, or its explicit ZeroPadding2D): ONNX pads [top, left, bottom, right].
std::vector<int64_t> KerasPad(int64_t stride) {
  return stride == 2 ? std::vector<int64_t>{0, 0, 1, 1}
                     : std::vector<int64_t>{1};
}

std::string ConvBnRelu6(GraphBuilder& b, const std::string& name,
                        const std::string& x, int64_t out, int64_t kernel,
                        int64_t stride, int64_t group) {
  GraphBuilder::ConvOpts o;
  o.stride = {stride};
  o.pad = kernel == 1 ? std::vector<int64_t>{0} : KerasPad(stride);
  o.group = group;
  o.bias = false;
  auto y = b.Conv(name, x, out, std::vector<int64_t>{kernel}, o);
  return b.Clip(b.BatchNorm(name + "_bn", y, 1e-3f), 0.0f, 6.0f);
}

StatusOr<Graph> BuildMobileNetV1(const Shape& in) {
  GraphBuilder b("mobilenet-v1");
  auto x = b.Input("input", in);
  x = ConvBnRelu6(b, "conv1", x, 32, 3, 2, 1);
  // (pointwise output channels, depthwise stride) of blocks 1..13.
  const int64_t kBlocks[][2] = {
      {64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
      {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  int i = 0;
  for (const auto& blk : kBlocks) {
    const std::string id = std::to_string(++i);
    const int64_t c = b.ShapeOf(x)[1];
    x = ConvBnRelu6(b, "conv_dw_" + id, x, c, 3, blk[1], c);
    x = ConvBnRelu6(b, "conv_pw_" + id, x, blk[0], 1, 1, 1);
  }
  x = b.Dropout(b.GlobalAvgPool(x), 1e-3f);
  x = b.Flatten(b.Conv("conv_preds", x, 1000, 1));
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("mobilenet-v1", "MobileNet v1 1.0 (ReLU6), ImageNet",
                     "Howard et al. 2017; keras.applications.MobileNet",
                     {1, 3, 224, 224}, 1000, BuildMobileNetV1);

}  // namespace
}  // namespace shoal
