// Xception (Chollet 2017) as keras.applications.Xception defines it:
// 22,855,952 params, the paper's count. Layer names are Keras's; Keras leaves
// the residual 1x1 convs unnamed, shoal calls them "blockN_residual".
#include <algorithm>

#include "models/builder.h"
#include "models/zoo.h"

namespace shoal {
namespace {

// SeparableConv2D(3x3, SAME, no bias): a depthwise conv, then a pointwise one.
std::string SepConvBn(GraphBuilder& b, const std::string& name,
                      const std::string& x, int64_t out) {
  const int64_t c = b.ShapeOf(x)[1];
  auto y = b.Conv(name + ".depthwise", x, c, 3, 1, 1, c, /*bias=*/false);
  y = b.Conv(name + ".pointwise", y, out, 1, 1, 0, 1, /*bias=*/false);
  return b.BatchNorm(name + "_bn", y, 1e-3f);
}

std::string ConvBn(GraphBuilder& b, const std::string& name,
                   const std::string& x, int64_t out, int64_t kernel,
                   int64_t stride) {
  auto y = b.Conv(name, x, out, kernel, stride, 0, 1, /*bias=*/false);
  return b.BatchNorm(name + "_bn", y, 1e-3f);
}

// TensorFlow's SAME padding of a 3x3/2 window as explicit ONNX pads: the odd
// pixel goes at the end, so 147 -> 74 pads (1, 1) but 74 -> 37 pads (0, 1).
std::vector<int64_t> SamePads3x3s2(const Shape& x) {
  std::vector<int64_t> begin, end;
  for (size_t i = 2; i < x.size(); ++i) {
    const int64_t out = (x[i] + 1) / 2;
    const int64_t total = std::max<int64_t>(0, (out - 1) * 2 + 3 - x[i]);
    begin.push_back(total / 2);
    end.push_back(total - total / 2);
  }
  begin.insert(begin.end(), end.begin(), end.end());
  return begin;
}

// Entry/exit block: two separable convs, a 3x3/2 SAME max pool, and a strided
// 1x1 conv on the skip path.
std::string DownBlock(GraphBuilder& b, int block, const std::string& x,
                      int64_t out1, int64_t out2, bool relu_first) {
  const std::string p = "block" + std::to_string(block);
  auto skip = ConvBn(b, p + "_residual", x, out2, 1, 2);
  auto y = relu_first ? b.Relu(x) : x;
  y = b.Relu(SepConvBn(b, p + "_sepconv1", y, out1));
  y = SepConvBn(b, p + "_sepconv2", y, out2);
  y = b.MaxPool(y, {3}, {2}, SamePads3x3s2(b.ShapeOf(y)), false, p + "_pool");
  return b.Add(y, skip);
}

StatusOr<Graph> BuildXception(const Shape& in) {
  GraphBuilder b("xception");
  auto x = b.Input("input", in);
  // Entry flow: VALID 3x3 convs, 299 -> 149 -> 147.
  x = b.Relu(ConvBn(b, "block1_conv1", x, 32, 3, 2));
  x = b.Relu(ConvBn(b, "block1_conv2", x, 64, 3, 1));
  x = DownBlock(b, 2, x, 128, 128, false);
  x = DownBlock(b, 3, x, 256, 256, true);
  x = DownBlock(b, 4, x, 728, 728, true);
  // Middle flow: eight identity-skip blocks of three separable convs.
  for (int block = 5; block <= 12; ++block) {
    const std::string p = "block" + std::to_string(block) + "_sepconv";
    auto y = x;
    for (int i = 1; i <= 3; ++i)
      y = SepConvBn(b, p + std::to_string(i), b.Relu(y), 728);
    x = b.Add(y, x);
  }
  // Exit flow.
  x = DownBlock(b, 13, x, 728, 1024, true);
  x = b.Relu(SepConvBn(b, "block14_sepconv1", x, 1536));
  x = b.Relu(SepConvBn(b, "block14_sepconv2", x, 2048));
  x = b.Flatten(b.GlobalAvgPool(x));
  x = b.Linear("predictions", x, 1000);
  return b.Finish({x});
}

SHOAL_REGISTER_MODEL("xception", "Xception, ImageNet",
                     "Chollet 2017; keras.applications.Xception",
                     {1, 3, 299, 299}, 1000, BuildXception);

}  // namespace
}  // namespace shoal
