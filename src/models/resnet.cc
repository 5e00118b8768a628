// ResNet-18 and ResNet-50 as torchvision defines them (v1.5: the stride of a
// bottleneck is on its 3x3 conv).
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

std::string ConvBn(GraphBuilder& b, const std::string& name, const std::string& x,
                   int64_t out, int64_t k, int64_t stride, int64_t pad,
                   const std::string& bn_name) {
  return b.BatchNorm(bn_name, b.Conv(name, x, out, k, stride, pad, 1, false));
}

std::string BasicBlock(GraphBuilder& b, const std::string& p, const std::string& x,
                       int64_t planes, int64_t stride) {
  auto y = b.Relu(ConvBn(b, p + ".conv1", x, planes, 3, stride, 1, p + ".bn1"));
  y = ConvBn(b, p + ".conv2", y, planes, 3, 1, 1, p + ".bn2");
  std::string skip = x;
  if (stride != 1 || b.ShapeOf(x)[1] != planes) {
    skip = ConvBn(b, p + ".downsample.0", x, planes, 1, stride, 0, p + ".downsample.1");
  }
  return b.Relu(b.Add(y, skip));
}

std::string Bottleneck(GraphBuilder& b, const std::string& p, const std::string& x,
                       int64_t planes, int64_t stride) {
  const int64_t out = planes * 4;
  auto y = b.Relu(ConvBn(b, p + ".conv1", x, planes, 1, 1, 0, p + ".bn1"));
  y = b.Relu(ConvBn(b, p + ".conv2", y, planes, 3, stride, 1, p + ".bn2"));
  y = ConvBn(b, p + ".conv3", y, out, 1, 1, 0, p + ".bn3");
  std::string skip = x;
  if (stride != 1 || b.ShapeOf(x)[1] != out) {
    skip = ConvBn(b, p + ".downsample.0", x, out, 1, stride, 0, p + ".downsample.1");
  }
  return b.Relu(b.Add(y, skip));
}

StatusOr<Graph> BuildResNet(const std::string& name, const Shape& in,
                            const std::vector<int>& blocks, bool bottleneck) {
  GraphBuilder b(name);
  auto x = b.Input("input", in);
  x = b.Relu(ConvBn(b, "conv1", x, 64, 7, 2, 3, "bn1"));
  x = b.MaxPool(x, {3}, {2}, {1});
  const int64_t planes[] = {64, 128, 256, 512};
  for (int layer = 0; layer < 4; ++layer) {
    for (int i = 0; i < blocks[layer]; ++i) {
      std::string p = "layer" + std::to_string(layer + 1) + "." + std::to_string(i);
      int64_t stride = (layer > 0 && i == 0) ? 2 : 1;
      x = bottleneck ? Bottleneck(b, p, x, planes[layer], stride)
                     : BasicBlock(b, p, x, planes[layer], stride);
    }
  }
  x = b.Flatten(b.GlobalAvgPool(x));
  x = b.Linear("fc", x, 1000);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("resnet18", "ResNet-18, ImageNet", "torchvision.models.resnet18",
                     {1, 3, 224, 224}, 1000, [](const Shape& in) {
                       return BuildResNet("resnet18", in, {2, 2, 2, 2}, false);
                     });
SHOAL_REGISTER_MODEL("resnet50", "ResNet-50, ImageNet", "torchvision.models.resnet50",
                     {1, 3, 224, 224}, 1000, [](const Shape& in) {
                       return BuildResNet("resnet50", in, {3, 4, 6, 3}, true);
                     });

}  // namespace
}  // namespace shoal
