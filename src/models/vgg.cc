// VGG16 as torchvision defines it (138,357,544 params).
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

StatusOr<Graph> BuildVgg16(const Shape& in) {
  GraphBuilder b("vgg16");
  auto x = b.Input("input", in);
  const int kCfg[] = {64, 64, 0, 128, 128, 0, 256, 256, 256, 0,
                      512, 512, 512, 0, 512, 512, 512, 0};
  int idx = 0;  // torchvision's index inside `features`
  for (int c : kCfg) {
    if (c == 0) {
      x = b.MaxPool(x, {2}, {2});
      idx += 1;
    } else {
      x = b.Relu(b.Conv("features." + std::to_string(idx), x, c, 3, 1, 1));
      idx += 2;
    }
  }
  x = b.Flatten(x);
  x = b.Relu(b.Linear("classifier.0", x, 4096));
  x = b.Dropout(x);
  x = b.Relu(b.Linear("classifier.3", x, 4096));
  x = b.Dropout(x);
  x = b.Linear("classifier.6", x, 1000);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("vgg16", "VGG16, ImageNet", "torchvision.models.vgg16",
                     {1, 3, 224, 224}, 1000, BuildVgg16);

}  // namespace
}  // namespace shoal
