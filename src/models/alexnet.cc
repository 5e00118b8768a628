// AlexNet, single stream, as torchvision defines it (61,100,840 params).
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

StatusOr<Graph> BuildAlexNet(const Shape& in) {
  GraphBuilder b("alexnet");
  auto x = b.Input("input", in);
  x = b.Relu(b.Conv("features.0", x, 64, 11, 4, 2));
  x = b.MaxPool(x, {3}, {2});
  x = b.Relu(b.Conv("features.3", x, 192, 5, 1, 2));
  x = b.MaxPool(x, {3}, {2});
  x = b.Relu(b.Conv("features.6", x, 384, 3, 1, 1));
  x = b.Relu(b.Conv("features.8", x, 256, 3, 1, 1));
  x = b.Relu(b.Conv("features.10", x, 256, 3, 1, 1));
  x = b.MaxPool(x, {3}, {2});
  // torchvision's AdaptiveAvgPool2d((6, 6)) is the identity at 224x224.
  x = b.Flatten(x);
  x = b.Dropout(x);
  x = b.Relu(b.Linear("classifier.1", x, 4096));
  x = b.Dropout(x);
  x = b.Relu(b.Linear("classifier.4", x, 4096));
  x = b.Linear("classifier.6", x, 1000);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("alexnet", "AlexNet (single stream), ImageNet",
                     "torchvision.models.alexnet", {1, 3, 224, 224}, 1000,
                     BuildAlexNet);

}  // namespace
}  // namespace shoal
