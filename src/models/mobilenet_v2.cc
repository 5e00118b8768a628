// MobileNet v2 exactly as torchvision.models.mobilenet_v2 defines it
// (3,504,872 params, 300.8M MACs), with its state_dict names.
#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// torchvision's Conv2dNormActivation: "<p>.0" conv, "<p>.1" BN, ReLU6.
std::string ConvBnRelu6(GraphBuilder& b, const std::string& p,
                        const std::string& x, int64_t out, int64_t kernel,
                        int64_t stride, int64_t group) {
  auto y = b.Conv(p + ".0", x, out, kernel, stride, (kernel - 1) / 2, group,
                  /*bias=*/false);
  return b.Clip(b.BatchNorm(p + ".1", y), 0.0f, 6.0f);
}

std::string InvertedResidual(GraphBuilder& b, const std::string& p,
                             const std::string& x, int64_t out, int64_t stride,
                             int64_t expand) {
  const int64_t in = b.ShapeOf(x)[1];
  const int64_t hidden = in * expand;
  std::string y = x;
  int i = 0;  // index inside "<p>.conv", as torchvision numbers it
  if (expand != 1) {
    y = ConvBnRelu6(b, p + ".conv.0", y, hidden, 1, 1, 1);
    ++i;
  }
  y = ConvBnRelu6(b, p + ".conv." + std::to_string(i++), y, hidden, 3, stride,
                  hidden);
  y = b.Conv(p + ".conv." + std::to_string(i++), y, out, 1, 1, 0, 1, false);
  y = b.BatchNorm(p + ".conv." + std::to_string(i), y);
  // Linear bottleneck: no activation; a skip only where shapes agree.
  return stride == 1 && in == out ? b.Add(x, y) : y;
}

StatusOr<Graph> BuildMobileNetV2(const Shape& in) {
  GraphBuilder b("mobilenet-v2");
  auto x = b.Input("input", in);
  x = ConvBnRelu6(b, "features.0", x, 32, 3, 2, 1);
  // torchvision's inverted_residual_setting: t (expand), c, n, s.
  const int64_t kSetting[][4] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2},
                                 {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2},
                                 {6, 320, 1, 1}};
  int idx = 1;
  for (const auto& s : kSetting) {
    for (int64_t i = 0; i < s[2]; ++i) {
      x = InvertedResidual(b, "features." + std::to_string(idx++), x, s[1],
                           i == 0 ? s[3] : 1, s[0]);
    }
  }
  x = ConvBnRelu6(b, "features." + std::to_string(idx), x, 1280, 1, 1, 1);
  x = b.Flatten(b.GlobalAvgPool(x));
  x = b.Dropout(x, 0.2f);
  x = b.Linear("classifier.1", x, 1000);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("mobilenet-v2", "MobileNet v2 1.0, ImageNet",
                     "torchvision.models.mobilenet_v2", {1, 3, 224, 224}, 1000,
                     BuildMobileNetV2);

}  // namespace
}  // namespace shoal
