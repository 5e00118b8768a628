// CifarNet, the LCP paper's CIFAR model: TF-slim's cifarnet layers (conv 64
// 5x5, 2x2/2 max pool, LRN, conv 64 5x5, LRN, pool, fc 384, dropout, fc 192,
// logits) with VALID convs on 32x32 images, so fc3 sees 64x5x5 = 1600 inputs:
// 797,962 params (Table II: 797.97k), 14.69M MACs (14.79M). docs/models.md
// explains the reading.
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

constexpr int64_t kClasses = 10;

// tf.nn.lrn(depth_radius=4, bias=1, alpha=0.001/9, beta=0.75) in ONNX terms:
// a window of 2*4+1 channels, and ONNX divides alpha by the window size.
std::string SlimLrn(GraphBuilder& b, const std::string& x,
                    const std::string& name) {
  return b.Lrn(x, 9, 0.001f, 0.75f, 1.0f, name);
}

StatusOr<Graph> BuildCifarNet(const Shape& in) {
  GraphBuilder b("cifarnet");
  auto x = b.Input("input", in);
  x = b.Relu(b.Conv("conv1", x, 64, 5));            // 32 -> 28
  x = b.MaxPool(x, {2}, {2}, {0}, false, "pool1");  // 14
  x = SlimLrn(b, x, "norm1");
  x = b.Relu(b.Conv("conv2", x, 64, 5));  // 10
  x = SlimLrn(b, x, "norm2");
  x = b.MaxPool(x, {2}, {2}, {0}, false, "pool2");  // 5
  x = b.Flatten(x);
  x = b.Dropout(b.Relu(b.Linear("fc3", x, 384)));
  x = b.Relu(b.Linear("fc4", x, 192));
  x = b.Linear("logits", x, kClasses);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("cifarnet", "CifarNet (LRN, dropout), CIFAR-10 32x32",
                     "TF-slim nets/cifarnet.py; LCP paper Table II",
                     {1, 3, 32, 32}, kClasses, BuildCifarNet);

}  // namespace
}  // namespace shoal
