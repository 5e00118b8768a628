// VGG-S, the CNN-S of Chatfield et al. 2014 ("Return of the devil in the
// details"), the LCP paper's Flower102 model: 224x224, 102 classes. Pools
// round down (PyTorch / TensorFlow VALID), so pool5 gives 512x5x5:
// 76,160,742 params, 2.38G MACs. The paper's 60.79M / 1.85G match no reading
// of the layer table; docs/models.md compares them.
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

constexpr int64_t kClasses = 102;

StatusOr<Graph> BuildVggS(const Shape& in) {
  GraphBuilder b("vgg-s");
  auto x = b.Input("input", in);
  x = b.Relu(b.Conv("conv1", x, 96, 7, 2));  // 224 -> 109
  // Caffe's LRN: 5 channels, alpha 5e-4 (already per window, as ONNX), k 2.
  x = b.Lrn(x, 5, 5e-4f, 0.75f, 2.0f, "norm1");
  x = b.MaxPool(x, {3}, {3}, {0}, false, "pool1");  // 36
  x = b.Relu(b.Conv("conv2", x, 256, 5));           // 32
  x = b.MaxPool(x, {2}, {2}, {0}, false, "pool2");  // 16
  x = b.Relu(b.Conv("conv3", x, 512, 3, 1, 1));
  x = b.Relu(b.Conv("conv4", x, 512, 3, 1, 1));
  x = b.Relu(b.Conv("conv5", x, 512, 3, 1, 1));
  x = b.MaxPool(x, {3}, {3}, {0}, false, "pool5");  // 5
  x = b.Flatten(x);
  x = b.Dropout(b.Relu(b.Linear("fc6", x, 4096)));
  x = b.Dropout(b.Relu(b.Linear("fc7", x, 4096)));
  x = b.Linear("fc8", x, kClasses);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("vgg-s", "VGG-S (CNN-S), Flower102 224x224",
                     "Chatfield et al. 2014; LCP paper Table II",
                     {1, 3, 224, 224}, kClasses, BuildVggS);

}  // namespace
}  // namespace shoal
